"""One task of bench/dist_null_step.py's cluster: a parameter server or the worker.

The same program runs under both systems: `--system tensorweave` imports tensorweave as tf,
`--system tf` imports tensorflow.compat.v1 with TF 1.x behaviour (graph mode, reference
variables, as the other benchmarks run it). It imports nothing else from this repository, so
the TensorFlow interpreter runs it without tensorweave installed.

A PS task starts its server, prints READY and joins until it is killed. The worker starts its
server, builds the graph with every variable on a PS task (on itself when there is none), opens
a session on its own server's target, and prints one JSON line, RESULT{...}, with its timings.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

MB = 1 << 20
EMBED_DIM = 64
SPARSE_BATCH = 32


def import_tf(system: str):
    if system == "tensorweave":
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if root not in sys.path:
            sys.path.insert(0, root)
        import tensorweave as tf  # the system is picked at run time
        return tf
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    return tf


def param_devices(num_ps: int) -> list[str]:
    """Where the variables live: one shard per PS task, or the worker itself with no PS."""
    if num_ps == 0:
        return ["/job:worker/task:0/device:CPU:0"]
    return [f"/job:ps/task:{i}/device:CPU:0" for i in range(num_ps)]


WORKER = "/job:worker/task:0/device:CPU:0"


def build_scalar(tf, devices):
    """One scalar per PS task; the worker sums them and adds a value computed from the sum back."""
    variables = []
    for i, dev in enumerate(devices):
        with tf.device(dev):
            variables.append(tf.Variable(0.0, name=f"scalar_{i}"))
    with tf.device(WORKER):
        total = tf.add_n([tf.identity(v) for v in variables]) if len(variables) > 1 else tf.identity(variables[0])
        delta = total * 1e-3 + 1.0
    updates = []
    for v, dev in zip(variables, devices):
        with tf.device(dev):
            updates.append(tf.assign_add(v, delta).op)
    check = tf.add_n([tf.identity(v) for v in variables]) if len(variables) > 1 else tf.identity(variables[0])
    return tf.group(*updates), (lambda step: None), check


def build_dense(tf, devices, megabytes):
    """`megabytes` of float32 split evenly over the PS tasks; all of it is read by the worker,
    scaled there, and added back, so the whole model crosses the network once each way."""
    per_shard = megabytes * MB // 4 // len(devices)
    variables, updates = [], []
    for i, dev in enumerate(devices):
        with tf.device(dev):
            # Fill rather than a constant initial value: the GraphDef stays small.
            variables.append(tf.Variable(tf.fill([per_shard], 1.0), name=f"dense_{i}"))
    for v, dev in zip(variables, devices):
        with tf.device(WORKER):
            delta = tf.identity(v) * 1e-6
        with tf.device(dev):
            updates.append(tf.assign_add(v, delta).op)
    with tf.device(devices[0]):
        check = variables[0][0]
    return tf.group(*updates), (lambda step: None), check


def build_sparse(tf, devices, megabytes, seed=0):
    """A [rows, 64] float32 embedding sharded over the PS tasks by id modulo the number of
    shards. Each step 32 random ids are drawn; each shard gathers its rows on its own task, the
    worker scales them, and a ScatterSub on the shard applies the sparse update."""
    n = len(devices)
    rows = megabytes * MB // 4 // EMBED_DIM
    shard_rows = [len(range(i, rows, n)) for i in range(n)]
    shards, id_feeds, updates = [], [], []
    for i, dev in enumerate(devices):
        with tf.device(dev):
            shards.append(tf.Variable(tf.fill([shard_rows[i], EMBED_DIM], 1.0), name=f"embedding_{i}"))
        with tf.device(WORKER):
            id_feeds.append(tf.placeholder(tf.int32, [None], name=f"ids_{i}"))
    for shard, ids, dev in zip(shards, id_feeds, devices):
        with tf.device(dev):
            rows_i = tf.gather(shard, ids)
        with tf.device(WORKER):
            delta = rows_i * 1e-3
        with tf.device(dev):
            updates.append(tf.scatter_sub(shard, ids, delta).op)
    rng = np.random.RandomState(seed)
    pool = []
    for _ in range(256):  # fresh ids each step, drawn before timing
        ids = rng.randint(0, rows, SPARSE_BATCH)
        pool.append({id_feeds[i]: (ids[ids % n == i] // n).astype(np.int32) for i in range(n)})

    def feed(step):
        return pool[step % len(pool)]

    with tf.device(devices[0]):
        check = shards[0][0, 0]
    return tf.group(*updates), feed, check


def run_ps(tf, cluster, task):
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="ps", task_index=task)
    print("READY", flush=True)
    server.join()


def run_worker(tf, cluster, args):
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
    devices = param_devices(args.num_ps)
    t0 = time.perf_counter()
    if args.variant == "scalar":
        train_op, feed, check = build_scalar(tf, devices)
    elif args.variant == "dense":
        train_op, feed, check = build_dense(tf, devices, args.megabytes)
    else:
        train_op, feed, check = build_sparse(tf, devices, args.megabytes)
    init = tf.global_variables_initializer()
    sess = tf.Session(server.target)
    sess.run(init)
    setup = time.perf_counter() - t0
    step = 0
    for _ in range(args.warmup):
        sess.run(train_op, feed(step))
        step += 1
    per_repeat = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        for _ in range(args.steps):
            sess.run(train_op, feed(step))
            step += 1
        per_repeat.append((time.perf_counter() - t) / args.steps)
    value = float(sess.run(check))
    sess.close()
    print("RESULT" + json.dumps({"seconds_per_step": statistics.median(per_repeat), "repeats": per_repeat,
                                 "steps_run": step, "check": value, "setup_seconds": setup}), flush=True)
    # The worker's server is never stopped by TF (it has no stop); the driver kills this process.


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--system", choices=("tensorweave", "tf"), required=True)
    p.add_argument("--cluster", required=True, help="cluster spec as JSON")
    p.add_argument("--job", choices=("ps", "worker"), required=True)
    p.add_argument("--task", type=int, default=0)
    p.add_argument("--variant", choices=("scalar", "dense", "sparse"), default="scalar")
    p.add_argument("--num-ps", type=int, default=0)
    p.add_argument("--megabytes", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    tf = import_tf(args.system)
    cluster = json.loads(args.cluster)
    if args.job == "ps":
        run_ps(tf, cluster, args.task)
    else:
        run_worker(tf, cluster, args)


if __name__ == "__main__":
    main()
