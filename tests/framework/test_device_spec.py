"""tf.DeviceSpec and tf.device scopes, against TensorFlow 1.x's rules (checked with
tensorflow.compat.v1 2.21): inner scopes win field by field, device functions replace the
device chosen by inner scopes, tf.device(None) stops outer scopes, colocation overrides."""
import pytest

import tensorweave as tf


def test_parse_full_partial_and_legacy_names():
    s = tf.DeviceSpec.from_string("/job:ps/replica:1/task:2/device:GPU:3")
    assert (s.job, s.replica, s.task, s.device_type, s.device_index) == ("ps", 1, 2, "GPU", 3)
    assert s.to_string() == "/job:ps/replica:1/task:2/device:GPU:3"
    assert tf.DeviceSpec.from_string("/cpu:*").to_string() == "/device:CPU:*"
    assert tf.DeviceSpec.from_string("/CPU:0").to_string() == "/device:CPU:0"
    assert tf.DeviceSpec.from_string("cpu:1").to_string() == "/device:CPU:1"
    assert tf.DeviceSpec.from_string("/device:cpu:0").to_string() == "/device:CPU:0"
    assert tf.DeviceSpec.from_string("/job:w/replica:0/task:0/cpu:0").to_string() == \
        "/job:w/replica:0/task:0/device:CPU:0"
    assert tf.DeviceSpec.from_string("/job:w/gpu:*").device_index is None
    assert tf.DeviceSpec.from_string("/replica:2").to_string() == "/replica:2"
    assert tf.DeviceSpec.from_string("/device:XLA_CPU:0").device_type == "XLA_CPU"
    assert tf.DeviceSpec(device_type="cpu").to_string() == "/device:CPU:*"
    assert tf.DeviceSpec(device_index=1).to_string() == ""
    assert repr(tf.DeviceSpec(job="a", device_type="GPU", device_index=0)) == \
        "<DeviceSpec(job=a, replica=None, task=None, device_type=GPU, device_index=0)>"


def test_parse_errors():
    with pytest.raises(ValueError, match="Unknown attribute 'foo'"):
        tf.DeviceSpec.from_string("/foo:bar")
    with pytest.raises(ValueError, match="Unknown attribute 'Job'"):
        tf.DeviceSpec.from_string("/Job:w")
    with pytest.raises(ValueError, match="Multiple device types"):
        tf.DeviceSpec.from_string("/device:CPU:0/device:GPU:0")
    with pytest.raises(ValueError):
        tf.DeviceSpec.from_string("/task:x")


def test_merge_replace_and_compatibility():
    merged = tf.DeviceSpec(job="w").make_merged_spec(tf.DeviceSpec(task=3, device_type="GPU"))
    assert merged.to_string() == "/job:w/task:3/device:GPU:*"
    assert tf.DeviceSpec.from_string("/job:w/task:1").replace(task=2).to_string() == "/job:w/task:2"
    full = tf.DeviceSpec.from_string("/job:localhost/replica:0/task:0/device:CPU:1")
    assert tf.DeviceSpec.from_string("/device:CPU:*").is_compatible_with(full)
    assert not tf.DeviceSpec.from_string("/device:CPU:0").is_compatible_with(full)
    assert not tf.DeviceSpec.from_string("/job:ps").is_compatible_with(full)
    assert tf.DeviceSpec(job="w") == tf.DeviceSpec.from_string("/job:w")
    assert hash(tf.DeviceSpec(job="w")) == hash(tf.DeviceSpec.from_string("/job:w"))


def test_nested_device_scopes_and_functions_follow_tf():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:1"):
            with tf.device("/device:CPU:0"):
                a = tf.constant(1.0, name="a")
            with tf.device("/task:2/device:GPU:*"):
                a2 = tf.constant(1.0, name="a2")
            with tf.device(None):
                b = tf.constant(1.0, name="b")
            with tf.device(lambda op: "/cpu:3"):
                c = tf.constant(1.0, name="c")
                with tf.device("/job:ps"):
                    c2 = tf.constant(1.0, name="c2")
        with tf.device(lambda op: "/job:foo"):
            with tf.device("/device:CPU:1"):
                d = tf.constant(1.0, name="d")
        with tf.device(tf.DeviceSpec(job="x", device_type="CPU", device_index=2)):
            e = tf.constant(1.0, name="e")
        with tf.device("/cpu:1"):
            with tf.device(""):
                k = tf.constant(2.0, name="k")
    assert a.op.device == "/job:worker/task:1/device:CPU:0"
    assert a2.op.device == "/job:worker/task:2/device:GPU:*"
    assert b.op.device == ""
    assert c.op.device == "/job:worker/task:1/device:CPU:3"
    assert c2.op.device == "/job:worker/task:1/device:CPU:3"   # the function replaced /job:ps
    assert d.op.device == "/job:foo"
    assert e.op.device == "/job:x/device:CPU:2"
    assert k.op.device == "/device:CPU:1"


def test_device_function_sees_the_op():
    seen = []

    def by_type(op):
        seen.append(op.type)
        return "/device:CPU:1" if op.type == "Const" else ""

    with tf.Graph().as_default():
        with tf.device(by_type):
            x = tf.constant(1.0)
            y = tf.identity(x)
    assert x.op.device == "/device:CPU:1" and y.op.device == ""
    assert seen == ["Const", "Identity"]


def test_colocate_with_takes_the_device_and_unions_groups():
    with tf.Graph().as_default():
        with tf.device("/job:w/device:CPU:1"):
            a = tf.constant(1.0, name="a")
        with tf.device("/device:CPU:0"):
            with tf.colocate_with(a):
                h = tf.constant(2.0, name="h")
                with tf.device("/task:3"):
                    h2 = tf.constant(2.0, name="h2")
        with tf.colocate_with(a):
            with tf.colocate_with(h):
                h4 = tf.constant(2.0, name="h4")
        free = tf.constant(0.0, name="free")
        with tf.colocate_with(free):
            with tf.device("/device:CPU:1"):
                f2 = tf.constant(0.0, name="f2")
    assert h.op.device == h2.op.device == h4.op.device == "/job:w/device:CPU:1"
    assert h.op.colocation_groups() == [b"loc:@a"] and h4.op.colocation_groups() == [b"loc:@a"]
    assert f2.op.device == "/device:CPU:1" and f2.op.colocation_groups() == [b"loc:@free"]
