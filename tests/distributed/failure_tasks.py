"""The processes tests/distributed/test_failures.py starts: one cluster task each.

    python failure_tasks.py MODE CLUSTER_JSON JOB TASK [ARG]

MODE:
  server        a task that serves until stopped (prints "up").
  done_ps       a PS that serves until every worker put a token on its done queue
                ("done_queue_<task>", shared by name), then stops its server and exits 0; ARG
                is the number of workers. Prints "up", then "tokens <sorted list>".
  done_worker   a worker that puts its task index on the done queue of each PS task, then exits.
  blocked_step  a worker that is also the client: its session runs one step in which the PS
                adds to a variable a value this task dequeues from a queue nobody fills, so the
                PS's part of the step waits for it. Prints "up", then "running" as it starts the
                step (which never ends).
"""
import json
import sys

import tensorweave as tf


def done_queue(ps_task):
    with tf.device(f"/job:ps/task:{ps_task}"):
        return tf.FIFOQueue(16, tf.int32, shapes=[[]], shared_name=f"done_queue_{ps_task}",
                            name=f"done_queue_{ps_task}")


def main(mode, cluster, job, task, arg=None):
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    print("up", flush=True)
    if mode == "server":
        server.join()
    elif mode == "done_ps":
        dequeue = done_queue(task).dequeue()
        # Only this task: the workers may have finished and exited already.
        config = tf.ConfigProto(device_filters=[f"/job:ps/task:{task}"])
        with tf.Session(server.target, config=config) as sess:
            tokens = [int(sess.run(dequeue)) for _ in range(int(arg))]
        print("tokens", sorted(tokens), flush=True)
        server.stop()
        server.join()
    elif mode == "done_worker":
        enqueues = [done_queue(k).enqueue(task) for k in range(len(cluster["ps"]))]
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
        with tf.Session(server.target, config=config) as sess:
            sess.run(enqueues)
        server.stop()
    elif mode == "blocked_step":
        with tf.device(f"/job:worker/task:{task}"):
            never = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="never_filled").dequeue()
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
            add = tf.assign_add(v, never)
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
        sess = tf.Session(server.target, config=config)
        sess.run(v.initializer)
        print("running", flush=True)
        sess.run(add)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4]), *sys.argv[5:])
