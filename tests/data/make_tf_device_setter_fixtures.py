"""Writes tf_device_setter_expected.json: the device TensorFlow 2.21 (TF1 graph mode, reference
variables) assigns to every op of several graphs built under tf.train.replica_device_setter.

Run with /opt/tfref/bin/python from the repository root. tf.contrib is gone from TF 2.x, so the
greedy case uses a small load-balancing strategy written here after TF 1.15's
tf.contrib.training.GreedyLoadBalancingStrategy / byte_size_load_fn (argmin over the loads so far,
load = elements * dtype size of the op's single output, the `shape` attr when the output shape
is not yet known); the byte sizes it records come from TF's own ops.
"""
import json
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_device_setter_expected.json")


class Greedy:
    def __init__(self, num_tasks, load_fn):
        self.loads = np.zeros(num_tasks)
        self.load_fn = load_fn

    def __call__(self, op):
        task = int(np.argmin(self.loads))
        self.loads[task] += self.load_fn(op)
        return task


def byte_size(op):
    out = op.outputs[0]
    shape = out.get_shape()
    if not shape.is_fully_defined():
        shape = tf.TensorShape(op.get_attr("shape"))
    return shape.num_elements() * out.dtype.size


def devices(graph):
    return {op.name: op.device for op in graph.get_operations()}


def case_round_robin():
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
                e = tf.Variable(2.0, name="e_cpu")
            with tf.device("/job:ps/task:2"):
                f = tf.Variable(3.0, name="f_task2")
            with tf.device("/job:ps"):
                h = tf.Variable(4.0, name="h_ps")
            with tf.device("/job:other"):
                k = tf.Variable(5.0, name="k_other")
                w = tf.add(z, 1.0, name="w_other")
            with tf.device("/task:1"):
                m = tf.Variable(6.0, name="m_task1")
            with tf.colocate_with(a):
                col = tf.identity(y, name="colocated")
            del e, f, h, k, w, m, col
    return devices(g)


def case_cluster_adam():
    g = tf.Graph()
    cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]}
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
    return devices(g)


def case_sharded_momentum():
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
    return devices(g)


def case_no_merge():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
            a = tf.Variable(1.0, name="a")
            with tf.device("/cpu:0"):
                b = tf.Variable(2.0, name="b_cpu")
                s = tf.add(a, b, name="s_cpu")
            with tf.device("/job:ps/task:1"):
                c = tf.Variable(3.0, name="c_ps1")
            t = tf.multiply(s, c, name="t")
            del t
    return devices(g)


def case_custom_ops():
    g = tf.Graph()
    with g.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_ops=["VariableV2", "Const"],
                                                      ps_device="/job:param", worker_device="")):
            a = tf.Variable([1.0, 2.0], name="a")
            k = tf.constant(3.0, name="k")
            y = tf.multiply(a, k, name="y")
            del y
    return devices(g)


def case_greedy():
    g = tf.Graph()
    loads = {}
    with g.as_default():
        def load_fn(op):
            loads[op.name] = byte_size(op)
            return loads[op.name]
        setter = tf.train.replica_device_setter(ps_tasks=3, ps_strategy=Greedy(3, load_fn))
        with tf.device(setter):
            shapes = [("big", [100, 10], tf.float32), ("small1", [10], tf.float32), ("small2", [10], tf.float32),
                      ("mid", [50], tf.float64), ("scalar", [], tf.float32), ("huge", [200, 5], tf.float32),
                      ("ints", [20], tf.int32), ("halves", [64], tf.float16), ("longs", [7, 3], tf.int64)]
            vs = [tf.get_variable(name, shape, dtype, initializer=tf.zeros_initializer())
                  for name, shape, dtype in shapes]
            tf.add_n([tf.reduce_sum(tf.cast(v, tf.float32)) for v in vs], name="total")
    return devices(g), loads


def setter_returns_none():
    return {
        "no_ps_job": tf.train.replica_device_setter(cluster={"worker": ["w0:1"]}) is None,
        "other_ps_name": tf.train.replica_device_setter(cluster={"ps": ["p:1"]}, ps_device="/job:param") is None,
        "zero_tasks": tf.train.replica_device_setter(ps_tasks=0) is None,
        "cluster_spec": tf.train.replica_device_setter(cluster=tf.train.ClusterSpec({"ps": ["p:1"]})) is None,
    }


def local_session_error():
    """A graph placed on /job:ps run in a local session: TF refuses it, soft placement or not."""
    out = {}
    for soft in (False, True):
        g = tf.Graph()
        with g.as_default():
            with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
                v = tf.Variable(1.0, name="v")
                y = v * 2.0
            try:
                with tf.Session(config=tf.ConfigProto(allow_soft_placement=soft)) as sess:
                    sess.run(tf.global_variables_initializer())
                    out[str(soft)] = {"value": float(sess.run(y))}
            except tf.errors.OpError as e:
                out[str(soft)] = {"error": type(e).__name__}
    return out


def main():
    greedy_devices, greedy_loads = case_greedy()
    result = {
        "round_robin": case_round_robin(),
        "cluster_adam": case_cluster_adam(),
        "sharded_momentum": case_sharded_momentum(),
        "no_merge": case_no_merge(),
        "custom_ops": case_custom_ops(),
        "greedy": greedy_devices,
        "greedy_loads": greedy_loads,
        "returns_none": setter_returns_none(),
        "local_session": local_session_error(),
        "standard_ps_ops": list(__import__("tensorflow.python.training.device_setter",
                                           fromlist=["x"]).STANDARD_PS_OPS),
    }
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
