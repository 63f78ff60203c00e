"""A worker process of synchronous between-graph replication: its own server and graph,
variables on the PS task (replica_device_setter), tf.train.SyncReplicasOptimizer under
MonitoredTrainingSession with the optimizer's hook.
argv = cluster JSON, task index, replicas_to_aggregate, last step, num_tokens (-1: TF's default).
Prints "ready" once its session exists, then one JSON line at the end: the steps it ran, the
final weights, and when each of its steps ended."""
import json
import sys
import time

import numpy as np

import tensorweave as tf

LR = 0.1


def data(task: int, step: int) -> tuple:
    """The batch a task feeds for its `step`-th run (tests/distributed/test_sync_replicas.py
    computes the same)."""
    rng = np.random.RandomState(1000 * task + step % 4)
    xs = rng.randn(16, 3).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.1 * task).astype(np.float32)
    return xs, ys


def main() -> None:
    cluster, task = json.loads(sys.argv[1]), int(sys.argv[2])
    replicas_to_aggregate, last_step, num_tokens = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    server = tf.train.Server(cluster, job_name="worker", task_index=task)
    num_workers = len(cluster["worker"])
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{task}",
                                                  cluster=tf.train.ClusterSpec(cluster))):
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                             replicas_to_aggregate=replicas_to_aggregate,
                                             total_num_replicas=num_workers)
        train = opt.minimize(loss, global_step=global_step)
    hooks = [opt.make_session_run_hook(is_chief=(task == 0), num_tokens=num_tokens),
             tf.train.StopAtStepHook(last_step=last_step)]
    steps, ends = 0, []
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0), hooks=hooks,
                                           save_checkpoint_secs=None, save_summaries_steps=None,
                                           save_summaries_secs=None, log_step_count_steps=None,
                                           # the chief's queue runner stays blocked in its next take
                                           # (as TF's): closing waits this long for it, then cancels it
                                           stop_grace_period_secs=1) as sess:
        print("ready", flush=True)
        while not sess.should_stop():
            xs, ys = data(task, steps)
            sess.run(train, {x: xs, y: ys})
            steps += 1
            ends.append(time.time())
    with tf.Session(server.target) as plain:  # the model the PS holds now
        weights = plain.run([w, b, global_step])
    print(json.dumps({"task": task, "steps": steps, "w": weights[0].ravel().tolist(), "b": weights[1].tolist(),
                      "global_step": int(weights[2]), "ends": ends}), flush=True)
    server.stop()


if __name__ == "__main__":
    main()
