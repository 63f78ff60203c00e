"""Sharded embedding step over a cluster (issue 14; OSDI 4.2, Figure 4): a [R, 64] float32 table
partitioned into 4 shards by tf.fixed_size_partitioner, placed on 4 PS tasks by
replica_device_setter; a worker task looks up 32 fed ids ("div"), loss = reduce_sum(rows), one
GradientDescent step (a sparse ScatterSub on each shard's task). Every task is a tf.train.Server
in this process talking gRPC on 127.0.0.1, for tensorweave and for TensorFlow alike.

Only the looked-up rows and their gradients cross tasks, so the step time must not depend on R.
Goal: step time flat from a 1 MiB table to a 1 GiB one, and at most 1.0x TensorFlow's."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_tf, time_per_step

import tensorweave as tf

ROWS = (4096, 4 * 1024 * 1024)  # 1 MiB and 1 GiB of float32 x 64

BODY = """
import socket


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_and_time(tf, np, rows):
    cluster = {"ps": ["127.0.0.1:%d" % _free_port() for _ in range(4)], "worker": ["127.0.0.1:%d" % _free_port()]}
    servers = [tf.train.Server(cluster, job_name=job, task_index=i)
               for job in ("ps", "worker") for i in range(len(cluster[job]))]
    rng = np.random.RandomState(0)
    pool = [rng.randint(0, rows, 32).astype(np.int64) for _ in range(256)]  # fresh ids each step
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(cluster))):
            table = tf.get_variable("table", [rows, 64], initializer=tf.zeros_initializer(),
                                    partitioner=tf.fixed_size_partitioner(4))
            ids = tf.placeholder(tf.int64, [32])
            loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids, partition_strategy="div"))
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        sess = tf.Session(servers[-1].target)
        sess.run(tf.global_variables_initializer())
        step = [0]

        def run():
            step[0] += 1
            sess.run(train_op, {ids: pool[step[0] % 256]})

        seconds = time_per_step(run, min_time=2.0)
        sess.close()
    for server in servers:
        if hasattr(server, "stop"):  # TensorFlow's in-process servers live until the process ends
            server.stop(grace=None)
    return seconds
"""

TF_BODY = BODY + """
import numpy as np
result = {str(rows): build_and_time(tf, np, rows) for rows in %r}
""" % (ROWS,)


def main() -> None:
    ours = {}
    for rows in ROWS:
        scope: dict = {"time_per_step": time_per_step}
        exec(BODY, scope)
        ours[str(rows)] = scope["build_and_time"](tf, np, rows)
    theirs = run_tf(TF_BODY) or {}
    for rows in ROWS:
        size = rows * 64 * 4 / 2 ** 20
        report(f"4 PS shards, table {size:.0f} MiB, 32 ids, SGD", ours[str(rows)], theirs.get(str(rows)))
    small, large = (ours[str(rows)] for rows in ROWS)
    print(f"{'':44s} tensorweave step time 1 GiB / 1 MiB: {large / small:.2f}", flush=True)


if __name__ == "__main__":
    main()
