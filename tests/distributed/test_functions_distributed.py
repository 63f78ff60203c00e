"""Graph functions in a distributed session (issue 15): the worker's graphs carry the library of
the functions their call nodes run, including stateful ones and gradients."""
import numpy as np

import tensorweave as tf
from tensorweave.python.framework.function import Defun


def test_defun_calls_run_on_a_grpc_worker():
    server = tf.train.Server.create_local_server()
    try:
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0])

            @Defun(tf.float32)
            def bump(d):
                return tf.assign_add(v, d)

            @Defun(tf.float32)
            def cube(x):
                return x * x * x

            x = tf.constant([1.0, 2.0])
            y = cube(x)
            g, = tf.gradients(y, x)
            z = bump(tf.constant([0.5, 0.5]))
            with tf.Session(server.target) as sess:
                sess.run(tf.global_variables_initializer())
                np.testing.assert_allclose(sess.run([y, g]), [[1.0, 8.0], [3.0, 12.0]])
                np.testing.assert_allclose(sess.run(z), [1.5, 2.5])
                np.testing.assert_allclose(sess.run(v), [1.5, 2.5])
    finally:
        server.stop()
