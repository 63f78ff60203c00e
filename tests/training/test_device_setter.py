"""tf.train.replica_device_setter and tf.contrib.training's greedy strategy: every op's device
compared with TensorFlow 2.21's (tests/data/tf_device_setter_expected.json, written by
tests/data/make_tf_device_setter_fixtures.py), plus the setter's options and errors."""
import json
import os
import re

import numpy as np

import pytest

import tensorweave as tf
from tensorweave.framework import errors

_FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "tf_device_setter_expected.json")
with open(_FIXTURE) as _f:
    EXPECTED = json.load(_f)


def devices(graph):
    return {op.name: op.device for op in graph.get_operations()}


# Ops whose names differ from TF's because tensorweave builds them differently (the gradient
# and optimizer internals, the constants of reductions and binary ops): not the setter's concern.
_RENAMED = re.compile(r"^(gradients/|train/(beta1|beta2|epsilon|learning_rate|momentum|value|Const|mul(_1)?/y|"
                      r"NoOp(_1)?|update/NoOp(_1)?|update_.*/(Shape|Unique|UnsortedSegmentSum|"
                      r"SparseApplyMomentum|ApplyMomentum|strided_slice.*|learning_rate|momentum|beta1|beta2|"
                      r"epsilon))$|(.*/)?(Const_\d+|Rank|range.*|.*/axis|w_other/y|.*/shape_as_tensor|.*/Const_1)$)")


def assert_devices(graph, expected):
    """Every op both graphs have must have TF's device; the ops only one graph has are
    internals named differently (never a variable, slot, initializer or update op)."""
    got = devices(graph)
    only = [name for name in set(got) ^ set(expected) if not _RENAMED.match(name)]
    assert not only, sorted(only)
    common = set(got) & set(expected)
    wrong = {name: (got[name], expected[name]) for name in common if got[name] != expected[name]}
    assert not wrong, wrong


def build_round_robin():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            a = tf.Variable(tf.zeros([4, 3]), name="a")
            b = tf.Variable(tf.ones([3]), name="b")
            c = tf.get_variable("c", [3, 2], initializer=tf.zeros_initializer())
            d = tf.Variable(1.0, name="d")
            y = tf.matmul(a, c) + tf.reduce_sum(b) * d
            with tf.device("/cpu:0"):
                z = tf.identity(y, name="on_cpu")
                tf.Variable(2.0, name="e_cpu")
            with tf.device("/job:ps/task:2"):
                tf.Variable(3.0, name="f_task2")
            with tf.device("/job:ps"):
                tf.Variable(4.0, name="h_ps")
            with tf.device("/job:other"):
                tf.Variable(5.0, name="k_other")
                tf.add(z, 1.0, name="w_other")
            with tf.device("/task:1"):
                tf.Variable(6.0, name="m_task1")
            with tf.colocate_with(a):
                tf.identity(y, name="colocated")
    return g


def build_cluster_adam(cluster):
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")):
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            gs = tf.train.get_or_create_global_step()
            w1 = tf.get_variable("w1", [4, 8], initializer=tf.glorot_uniform_initializer(seed=1))
            b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
            w2 = tf.get_variable("w2", [8, 1], initializer=tf.glorot_uniform_initializer(seed=2))
            hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
            loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - y), name="loss")
            tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs, name="train")
    return g


def build_sharded_momentum():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_device="/job:ps/device:CPU:0",
                                                      worker_device="/job:worker/task:0/device:CPU:0")):
            shards = [tf.get_variable(f"emb/part_{i}", [5, 3], initializer=tf.ones_initializer())
                      for i in range(3)]
            emb = tf.concat(shards, 0, name="emb_concat")
            ids = tf.constant([0, 4, 7, 14], name="ids")
            loss = tf.reduce_sum(tf.gather(emb, ids), name="loss")
            tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, name="train")
    return g


def build_no_merge():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
            a = tf.Variable(1.0, name="a")
            with tf.device("/cpu:0"):
                b = tf.Variable(2.0, name="b_cpu")
                s = tf.add(a, b, name="s_cpu")
            with tf.device("/job:ps/task:1"):
                c = tf.Variable(3.0, name="c_ps1")
            tf.multiply(s, c, name="t")
    return g


def build_custom_ops():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_ops=["VariableV2", "Const"],
                                                      ps_device="/job:param", worker_device="")):
            a = tf.Variable([1.0, 2.0], name="a")
            k = tf.constant(3.0, name="k")
            tf.multiply(a, k, name="y")
    return g


GREEDY_SHAPES = [("big", [100, 10], tf.float32), ("small1", [10], tf.float32), ("small2", [10], tf.float32),
                 ("mid", [50], tf.float64), ("scalar", [], tf.float32), ("huge", [200, 5], tf.float32),
                 ("ints", [20], tf.int32), ("halves", [64], tf.float16), ("longs", [7, 3], tf.int64)]


def build_greedy():
    g = tf.Graph()
    loads = {}
    with g.as_default():
        def load_fn(op):
            loads[op.name] = tf.contrib.training.byte_size_load_fn(op)
            return loads[op.name]
        strategy = tf.contrib.training.GreedyLoadBalancingStrategy(3, load_fn)
        with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
            vs = [tf.get_variable(name, shape, dtype, initializer=tf.zeros_initializer())
                  for name, shape, dtype in GREEDY_SHAPES]
            tf.add_n([tf.reduce_sum(tf.cast(v, tf.float32)) for v in vs], name="total")
    return g, loads


def test_round_robin_with_inner_devices_and_colocation():
    assert_devices(build_round_robin(), EXPECTED["round_robin"])


def test_cluster_dict_with_adam_slots_and_gradients():
    cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}
    assert_devices(build_cluster_adam(cluster), EXPECTED["cluster_adam"])


def test_sharded_variables_with_momentum_and_device_types():
    assert_devices(build_sharded_momentum(), EXPECTED["sharded_momentum"])


def test_merge_devices_false_keeps_explicit_devices():
    assert_devices(build_no_merge(), EXPECTED["no_merge"])


def test_custom_ps_ops_and_empty_worker_device():
    assert_devices(build_custom_ops(), EXPECTED["custom_ops"])


def test_greedy_load_balancing_by_byte_size():
    g, loads = build_greedy()
    assert loads == EXPECTED["greedy_loads"]
    assert_devices(g, EXPECTED["greedy"])


def test_standard_ps_ops_are_tfs():
    from tensorweave.training.device_setter import STANDARD_PS_OPS
    assert list(STANDARD_PS_OPS) == EXPECTED["standard_ps_ops"]


class _Cluster:
    """Duck-typed ClusterSpec: the setter only reads `as_dict()`."""

    def __init__(self, jobs):
        self._jobs = jobs

    def as_dict(self):
        return self._jobs


@pytest.mark.parametrize("case, make", [
    ("no_ps_job", lambda: tf.train.replica_device_setter(cluster={"worker": ["w0:1"]})),
    ("other_ps_name", lambda: tf.train.replica_device_setter(cluster={"ps": ["p:1"]}, ps_device="/job:param")),
    ("zero_tasks", lambda: tf.train.replica_device_setter(ps_tasks=0)),
    ("cluster_spec", lambda: tf.train.replica_device_setter(cluster=_Cluster({"ps": ["p:1"]}))),
])
def test_setter_is_none_without_ps_tasks(case, make):
    assert (make() is None) == EXPECTED["returns_none"][case]


def test_cluster_object_and_sparse_task_dict_set_the_task_count():
    for cluster in (_Cluster({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]}), {"ps": {0: "a:1", 1: "b:1", 5: "c:1"}}):
        g = tf.Graph()
        with g.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=7, cluster=cluster)):
            vs = [tf.Variable(float(i), name=f"v{i}") for i in range(4)]
        assert [v.op.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0"]


def test_cluster_spec_duck_typed_graph_matches_tf():
    cluster = _Cluster({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]})
    assert_devices(build_cluster_adam(cluster), EXPECTED["cluster_adam"])


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)
    with pytest.raises(TypeError, match="cluster must be"):
        tf.train.replica_device_setter(cluster=["ps0:1"])


def test_merge_devices_false_warns(caplog):
    with caplog.at_level("WARNING", logger="tensorflow"):
        tf.train.replica_device_setter(ps_tasks=1, merge_devices=False)
    assert "merge_devices=true" in caplog.text


def test_custom_strategy_receives_each_ps_op_in_creation_order():
    seen = []

    def strategy(op):
        seen.append(op.name)
        return len(seen) * 2

    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=1, ps_strategy=strategy)):
        a = tf.Variable(1.0, name="a")
        b = tf.get_variable("b", [2])
    assert seen == ["a", "b"]
    assert (a.op.device, b.op.device) == ("/job:ps/task:2", "/job:ps/task:4")


def test_greedy_strategy_breaks_ties_by_lowest_task_and_returns_ints():
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(3, lambda op: op)
    assert [strategy(load) for load in (5, 1, 1, 1, 10, 1)] == [0, 1, 2, 1, 2, 1]
    assert all(type(strategy(1)) is int for _ in range(3))


def test_byte_size_load_fn_errors():
    g = tf.Graph()
    with g.as_default():
        split = tf.split(tf.zeros([4]), 2)
        ph = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="single output"):
        tf.contrib.training.byte_size_load_fn(split[0].op)
    with pytest.raises(ValueError):
        tf.contrib.training.byte_size_load_fn(ph.op)
    assert tf.contrib.training.byte_size_load_fn(g.get_operation_by_name("zeros")) == 16


def test_other_contrib_training_names_say_not_provided():
    with pytest.raises(AttributeError, match="not provided by tensorweave"):
        tf.contrib.training.HParams  # noqa: B018


def _setter_graph():
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=1)):
        v = tf.Variable(1.0, name="v")
        y = tf.multiply(v, 2.0, name="y")
    return g, y


def test_local_session_refuses_ps_devices_without_soft_placement():
    # TF 2.21 refuses such a graph in a local session: no /job:ps device in the process.
    assert EXPECTED["local_session"]["False"] == {"error": "InvalidArgumentError"}
    g, y = _setter_graph()
    with g.as_default(), tf.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Cannot assign a device.*no devices matching"):
            sess.run(tf.global_variables_initializer())


def test_local_session_with_soft_placement_runs_it_locally():
    # A documented difference: TF 2.21 refuses this graph even with allow_soft_placement (its
    # soft placement never changes the job); tensorweave's placer relaxes the whole request then.
    assert EXPECTED["local_session"]["True"] == {"error": "InvalidArgumentError"}
    g, y = _setter_graph()
    config = tf.ConfigProto(allow_soft_placement=True)
    with g.as_default(), tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(y) == 2.0


def _train(setter):
    g = tf.Graph()
    with g.as_default():
        with tf.device(setter):
            x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0)
            y = tf.constant([[1.0], [0.0], [2.0], [1.0]])
            w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.5))
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss])[1] for _ in range(5)]
            return losses, sess.run([w, b]), w.op._assigned_device, loss.op._assigned_device


def test_training_under_the_setter_in_a_two_device_session_matches_unplaced_training():
    # ps_device / worker_device naming this process's two CPUs: the setter's placement runs.
    setter = tf.train.replica_device_setter(ps_tasks=1, ps_device="/job:localhost/replica:0/device:CPU:1",
                                            worker_device="/job:localhost/replica:0/task:0/device:CPU:0")
    losses, (w, b), w_device, loss_device = _train(setter)
    ref_losses, (ref_w, ref_b), _, _ = _train(None)
    assert w_device == "/job:localhost/replica:0/task:0/device:CPU:1"
    assert loss_device == "/job:localhost/replica:0/task:0/device:CPU:0"
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    np.testing.assert_allclose(w, ref_w, rtol=1e-6)
    np.testing.assert_allclose(b, ref_b, rtol=1e-6)
    assert losses[-1] < losses[0]
