"""tf.test's build and machine queries, and its temporary directory."""
import os

import tensorweave as tf
from tensorweave.runtime import device


def test_build_queries():
    assert not (tf.test.is_built_with_cuda() or tf.test.is_built_with_rocm() or tf.test.is_built_with_xla()
                or tf.test.is_built_with_gpu_support())
    assert tf.test.is_gpu_available(cuda_only=True) is False


def test_gpu_follows_the_registered_device_types(monkeypatch):
    assert tf.test.is_gpu_available() is False and tf.test.gpu_device_name() == ""
    monkeypatch.setattr(device, "_FACTORIES", dict(device._FACTORIES, GPU=None))
    assert tf.test.is_gpu_available() is True and tf.test.gpu_device_name() == "/device:GPU:0"


def test_temp_dir_is_one_directory_per_process():
    path = tf.test.get_temp_dir()
    assert os.path.isdir(path) and tf.test.get_temp_dir() == path
