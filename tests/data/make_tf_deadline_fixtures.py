"""Writes tf_deadlines.json: how TensorFlow 2.21 ends steps that run past a deadline or whose
session is closed (error class, message, seconds to the end). Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_deadline_fixtures.py
tests/runtime/test_deadlines.py checks ours against it."""
import json
import os
import threading
import time

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()
HERE = os.path.dirname(os.path.abspath(__file__))


def long_loop():
    i = tf.constant(0)
    return tf.while_loop(lambda i: i < 10 ** 8, lambda i: i + 1, [i])


def timed(fn):
    start = time.monotonic()
    try:
        fn()
        return {"error": None, "seconds": time.monotonic() - start}
    except tf.errors.OpError as err:
        return {"error": type(err).__name__, "message": err.message, "seconds": time.monotonic() - start}


def run_options_timeout():
    with tf.Graph().as_default():
        out = long_loop()
        with tf.Session() as sess:
            return timed(lambda: sess.run(out, options=tf.RunOptions(timeout_in_ms=500)))


def matmul_chain_timeout():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [512, 512])  # not a constant: Grappler would fold the chain
        value = np.random.RandomState(0).rand(512, 512).astype(np.float32) / 512
        y = x
        for _ in range(400):
            y = tf.matmul(y, x)
        # (with inter_op_parallelism_threads=1 TF runs the step on the caller's thread and
        # ignores the deadline: the default pool is what users get)
        with tf.Session() as sess:
            return timed(lambda: sess.run(y.op, {x: value}, options=tf.RunOptions(timeout_in_ms=200)))


def operation_timeout():
    with tf.Graph().as_default():
        out = long_loop()
        with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=300)) as sess:
            first = timed(lambda: sess.run(out))
            # RunOptions.timeout_in_ms overrides the session's default
            second = timed(lambda: sess.run(out, options=tf.RunOptions(timeout_in_ms=800)))
            return {"default": first, "overridden": second}


def queue_timeout():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, tf.float32)
        with tf.Session() as sess:
            return timed(lambda: sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=300)))


def close_during_loop():
    with tf.Graph().as_default():
        out = long_loop()
        sess = tf.Session()
        box = {}

        def step():
            box["result"] = timed(lambda: sess.run(out))
            box["ended"] = time.monotonic()

        t = threading.Thread(target=step)
        t.start()
        time.sleep(0.5)
        closed = time.monotonic()
        sess.close()
        t.join(30)
        result = box["result"]
        result["after_close"] = box["ended"] - closed
        return result


def main():
    out = {
        "tf_version": tf.__version__,
        "run_options_timeout": run_options_timeout(),
        "matmul_chain_timeout": matmul_chain_timeout(),
        "operation_timeout": operation_timeout(),
        "queue_timeout": queue_timeout(),
        "close_during_loop": close_during_loop(),
    }
    with open(os.path.join(HERE, "tf_deadlines.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
