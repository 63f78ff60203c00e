"""A worker process of between-graph replication: its own server, graph and session, variables
on the PS task (replica_device_setter), asynchronous SGD under MonitoredTrainingSession.
argv = cluster JSON, task index, checkpoint dir, last step. Prints one JSON line at the end."""
import json
import sys

import numpy as np

import tensorweave as tf


def main() -> None:
    cluster, task, checkpoint_dir, last_step = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    server = tf.train.Server(cluster, job_name="worker", task_index=task)
    rng = np.random.RandomState(task)
    xs = rng.randn(256, 4).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)).astype(np.float32)
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{task}",
                                                  cluster=tf.train.ClusterSpec(cluster))):
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        global_step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
    hooks = [tf.train.StopAtStepHook(last_step=last_step)]
    losses, steps = [], 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0),
                                           checkpoint_dir=checkpoint_dir if task == 0 else None,
                                           hooks=hooks, save_checkpoint_secs=None, save_checkpoint_steps=20,
                                           save_summaries_steps=None, save_summaries_secs=None,
                                           log_step_count_steps=None) as sess:
        while not sess.should_stop():
            i = steps % 8
            batch = {x: xs[i * 32:(i + 1) * 32], y: ys[i * 32:(i + 1) * 32]}
            _, value, gs = sess.run([train, loss, global_step], batch)
            losses.append(float(value))
            steps += 1
    print(json.dumps({"task": task, "steps": steps, "first": losses[0], "last": losses[-1], "global_step": int(gs)}),
          flush=True)
    server.stop()


if __name__ == "__main__":
    main()
