"""tf.math, tf.linalg and tf.random: TF1.13+ aliases of the top-level functions."""
import numpy as np

import tensorweave as tf


def test_math_linalg_random_aliases_are_the_top_level_functions():
    assert tf.math.reduce_sum is tf.reduce_sum and tf.math.cumsum is tf.cumsum
    assert tf.math.divide_no_nan is tf.div_no_nan and tf.math.segment_sum is tf.segment_sum
    assert tf.math.softmax is tf.nn.softmax and tf.math.top_k is tf.nn.top_k
    assert tf.linalg.inv is tf.matrix_inverse and tf.linalg.det is tf.matrix_determinant
    assert tf.linalg.diag is tf.matrix_diag and tf.linalg.diag_part is tf.matrix_diag_part
    assert tf.linalg.solve is tf.matrix_solve and tf.linalg.eye is tf.eye and tf.linalg.norm is tf.norm
    assert tf.random.normal is tf.random_normal and tf.random.uniform is tf.random_uniform
    assert tf.random.shuffle is tf.random_shuffle and tf.random.set_random_seed is tf.set_random_seed


def test_namespaced_calls_compute():
    m = tf.constant([[2.0, 0.0], [0.0, 4.0]])
    with tf.Session() as sess:
        inv, det, total, sample = sess.run([tf.linalg.inv(m), tf.linalg.det(m), tf.math.reduce_sum(m),
                                            tf.random.uniform([3], seed=1)])
    np.testing.assert_allclose(inv, [[0.5, 0.0], [0.0, 0.25]])
    assert np.isclose(det, 8.0) and total == 6.0 and sample.shape == (3,)
