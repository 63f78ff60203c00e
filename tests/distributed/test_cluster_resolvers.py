"""The cluster resolvers beyond the TF fixture: tensorweave's CPU-only defaults, TF_CONFIG read
afresh, the abstract base, and the tf.distribute namespace."""
import json
import os

import pytest

import tensorweave as tf
from tensorweave.distributed.cluster_resolver import slurm_cluster_resolver

R = tf.distribute.cluster_resolver


@pytest.fixture
def env(monkeypatch):
    for name in ("TF_CONFIG", "CUDA_VISIBLE_DEVICES", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS",
                 "SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def slurm(env, rank):
    env.setenv("SLURM_PROCID", str(rank))
    env.setenv("SLURM_STEP_NUM_TASKS", "4")
    env.setenv("SLURM_STEP_NODELIST", "cpu[1-2]")
    env.setenv("SLURM_STEP_TASKS_PER_NODE", "2(x2)")


def test_slurm_on_cpus_places_every_task_and_sets_no_gpus(env):
    # TF asks nvidia-smi and cannot place tasks without GPUs; tensorweave runs on CPUs.
    slurm(env, 3)
    resolver = R.SlurmClusterResolver(jobs={"ps": 1, "worker": 3})
    spec = resolver.cluster_spec()
    assert spec.as_dict() == {"ps": ["cpu1:8888"], "worker": ["cpu1:8889", "cpu2:8888", "cpu2:8889"]}
    assert resolver.get_task_info() == ("worker", 2)
    assert resolver.master() == "grpc://cpu2:8889"
    assert resolver.num_accelerators() == {"GPU": 0}
    assert "CUDA_VISIBLE_DEVICES" not in os.environ


def test_slurm_gpus_limit_tasks_as_tensorflow(env):
    slurm(env, 0)
    with pytest.raises(RuntimeError, match="more GPUs per node"):
        R.SlurmClusterResolver(gpus_per_node=1, gpus_per_task=1)


def test_slurm_bad_tasks_per_node(env):
    slurm(env, 0)
    env.setenv("SLURM_STEP_TASKS_PER_NODE", "2(x)")
    with pytest.raises(ValueError, match='Invalid tasks-per-node list format "2\\(x\\)"'):
        R.SlurmClusterResolver()


@pytest.mark.parametrize("hostlist", ["a[1-2", "a[[1]]", ",a", "a[1-x]", "a[1-2-3]"])
def test_bad_hostlists(hostlist):
    with pytest.raises(ValueError, match="Invalid hostlist format"):
        slurm_cluster_resolver.expand_hostlist(hostlist)


def test_tf_config_is_read_at_each_query(env):
    resolver = R.TFConfigClusterResolver()
    assert resolver.task_type is None and resolver.cluster_spec().jobs == []
    env.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "b:1"]},
                                        "task": {"type": "worker", "index": 1}}))
    assert (resolver.task_type, resolver.task_id, resolver.master()) == ("worker", 1, "b:1")
    env.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "c:1"]},
                                        "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"}))
    assert resolver.master() == "grpc://c:1"
    assert resolver.num_accelerators() == {}


def test_tf_config_resolver_feeds_a_simple_resolver(env):
    env.setenv("TF_CONFIG", json.dumps({"cluster": {"ps": ["p:1"], "worker": ["w:1"]},
                                        "task": {"type": "ps", "index": 0}}))
    from_env = R.TFConfigClusterResolver()
    simple = R.SimpleClusterResolver(from_env.cluster_spec(), task_type=from_env.task_type,
                                     task_id=from_env.task_id, rpc_layer="grpc")
    assert simple.cluster_spec() == from_env.cluster_spec()
    assert simple.master("ps", 0) == "grpc://p:1"


def test_the_base_is_abstract():
    with pytest.raises(TypeError):
        R.ClusterResolver()

    class Fixed(R.ClusterResolver):
        def cluster_spec(self):
            return tf.train.ClusterSpec({"worker": ["a:1"]})

        def master(self, task_type=None, task_id=None, rpc_layer=None):
            return "a:1"

    fixed = Fixed()
    assert (fixed.task_type, fixed.task_id, fixed.environment, dict(fixed.num_accelerators())) == (None, None, "", {})
    fixed.task_type, fixed.task_id = "worker", 0
    assert (fixed.task_type, fixed.task_id) == ("worker", 0)
    assert R.UnionResolver(fixed).cluster_spec().as_dict() == {"worker": ["a:1"]}
    with pytest.raises(TypeError, match="sub-class"):
        R.UnionResolver(fixed, object())
    with pytest.raises(ValueError, match="Unexpected kwargs"):
        R.UnionResolver(fixed, bad=1)


def test_distribute_namespace():
    assert {name for name in dir(R) if not name.startswith("_")} >= {
        "ClusterResolver", "SimpleClusterResolver", "TFConfigClusterResolver", "SlurmClusterResolver",
        "UnionResolver"}
    with pytest.raises(AttributeError, match="KubernetesClusterResolver is not provided"):
        R.KubernetesClusterResolver
    with pytest.raises(AttributeError, match="tf.distribute.MirroredStrategy is not provided"):
        tf.distribute.MirroredStrategy
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchResolver'"):
        R.NoSuchResolver
