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
