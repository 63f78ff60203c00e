"""ClusterSpec and the cluster protos beyond the TF fixture: what TF's bytes parse into, copies,
hashing, and where the public names live."""
import json
import os

import pytest

import tensorweave as tf
from tensorweave.distributed import cluster_spec, protos

CASES = {case["name"]: case for case in json.load(open(os.path.join(
    os.path.dirname(__file__), "..", "data", "tf_cluster_expected.json")))["cases"]}


def tf_bytes(name, index=None):
    value = CASES[name]["expected"]["value"]
    return bytes.fromhex((value if index is None else value[index])["bytes"])


def test_server_def_parses_tensorflows_bytes():
    server_def = tf.train.ServerDef.FromString(tf_bytes("server_def_bytes"))
    assert (server_def.job_name, server_def.task_index, server_def.protocol, server_def.port) == \
        ("worker", 1, "grpc", 2222)
    assert server_def.default_session_config.allow_soft_placement
    spec = tf.train.ClusterSpec(server_def.cluster)
    assert spec.as_dict() == {"ps": ["p0:2222", "p1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}
    assert server_def.SerializeToString(deterministic=True) == tf_bytes("server_def_bytes")


def test_server_def_device_filters_parse():
    server_def = tf.train.ServerDef.FromString(tf_bytes("server_def_device_filters", 0))
    (job,) = server_def.cluster_device_filters.jobs
    assert job.name == "worker" and server_def.replica == 2
    assert list(job.tasks[1].device_filters) == ["/job:ps", "/job:worker/task:1"]
    assert isinstance(job.tasks[0], protos.TaskDeviceFilters)


def test_server_def_session_config_is_the_config_proto():
    server_def = tf.train.ServerDef(default_session_config=tf.ConfigProto(inter_op_parallelism_threads=3))
    assert server_def.default_session_config.inter_op_parallelism_threads == 3
    with pytest.raises(TypeError):
        tf.train.ServerDef(default_session_config=tf.RunOptions())


def test_from_cluster_spec_copies_the_proto():
    original = tf.train.ClusterSpec({"worker": ["a:1"]})
    copy = tf.train.ClusterSpec(original)
    copy.as_cluster_def().job[0].tasks[0] = "changed:1"
    assert original.task_address("worker", 0) == "a:1"
    assert original.as_cluster_def().job[0].tasks[0] == "a:1"


def test_cluster_def_is_sorted_and_spec_keeps_job_order():
    spec = tf.train.ClusterSpec({"worker": {2: "w2:1", 0: "w0:1"}, "chief": ["c:1"]})
    assert spec.jobs == ["worker", "chief"]
    assert [job.name for job in spec.as_cluster_def().job] == ["chief", "worker"]
    assert spec.as_dict() == {"worker": {0: "w0:1", 2: "w2:1"}, "chief": ["c:1"]}


def test_unhashable_and_falsy_when_empty():
    with pytest.raises(TypeError):
        hash(tf.train.ClusterSpec({"w": ["a:1"]}))
    assert not tf.train.ClusterSpec({})
    assert tf.train.ClusterSpec({"w": []})


def test_job_tasks_of_an_empty_job_is_a_value_error():
    with pytest.raises(ValueError, match="'w' has no tasks"):
        tf.train.ClusterSpec({"w": []}).job_tasks("w")


def test_tensorflow_cluster_def_of_another_class_is_refused():
    class NotAClusterDef:
        job = []

    with pytest.raises(TypeError, match="ClusterDef"):
        tf.train.ClusterSpec(NotAClusterDef())


def test_public_names():
    assert tf.train.ClusterSpec is cluster_spec.ClusterSpec
    assert tf.train.ClusterDef is protos.ClusterDef and tf.train.JobDef is protos.JobDef
    assert tf.train.ServerDef is protos.ServerDef
    assert tf.train.ServerDef.DESCRIPTOR.fields_by_name["cluster"].message_type is tf.train.ClusterDef.DESCRIPTOR
