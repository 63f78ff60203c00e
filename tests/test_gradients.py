"""tf.gradients itself (tensorweave/gradients.py), exercised with the math and reduction ops:
hand-computed values, summing partial gradients, unconnected and integer inputs, grad_ys,
stop_gradients and tf.stop_gradient, gradient overrides, second derivatives (Hessian-vector
products, tf.hessians), and TF's particular choices (ties, Pow at x <= 0, Sign)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import define_op
from tensorweave.ops import math as math_ops


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# An op defined only here, with a kernel and no gradient (names starting with "Test" are
# exempt from the every-op-has-a-gradient check).
TestNoGradientOp = define_op("TestNoGradientOp", inputs=["x: T"], outputs=["y: T"],
                             attrs=["T: {float32, float64}"], shape_fn=lambda op: [op.inputs[0].shape])
TestNoGradientOp.kernel()(lambda ctx: lambda x: x * 2)


@tf.RegisterGradient("TestTimesTenSquareGrad")
def _times_ten_square_grad(op, grad):
    return [grad * 10.0]


@tf.RegisterGradient("TestSparseIdentityGrad")
def _sparse_identity_grad(op, grad):
    """Identity's gradient, returned as IndexedSlices covering every row."""
    rows = tf.shape(grad)[0]
    return [IndexedSlices(grad, tf.range(0, rows, 1), tf.shape(grad))]


# ---------------------------------------------------------------------------------------------
# First derivatives
# ---------------------------------------------------------------------------------------------
def test_simple_expression_matches_hand_computed_gradient():
    x = tf.placeholder(tf.float64, [2, 3])
    w = tf.placeholder(tf.float64, [3])
    y = tf.reduce_sum(tf.sin(x) * w + tf.square(w) / 2.0)
    gx, gw = tf.gradients(y, [x, w])
    xv = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    wv = np.array([1.0, -2.0, 3.0])
    gxv, gwv = run([gx, gw], {x: xv, w: wv})
    np.testing.assert_allclose(gxv, np.cos(xv) * wv)
    np.testing.assert_allclose(gwv, np.sin(xv).sum(0) + 2 * wv)  # w/2 summed over 2 rows
    assert gx.shape.as_list() == [2, 3] and gw.shape.as_list() == [3]


def test_partial_gradients_of_several_consumers_are_summed():
    x = tf.placeholder(tf.float32, [3])
    y = x * x + tf.exp(x) + 3.0 * x
    g = tf.gradients(y, x)[0]
    xv = np.array([0.5, -1.0, 2.0], np.float32)
    np.testing.assert_allclose(run(g, {x: xv}), 2 * xv + np.exp(xv) + 3, rtol=1e-6)
    assert g.dtype == tf.float32


def test_gradient_of_several_ys_is_the_gradient_of_their_sum():
    x = tf.placeholder(tf.float64, [2])
    g = tf.gradients([tf.reduce_sum(x * x), tf.reduce_prod(x)], x)[0]
    xv = np.array([2.0, 5.0])
    np.testing.assert_allclose(run(g, {x: xv}), 2 * xv + [5.0, 2.0])


def test_unconnected_x_gets_none():
    x = tf.placeholder(tf.float32, [2])
    unused = tf.placeholder(tf.float32, [2])
    other = tf.exp(unused)  # a graph of its own, not leading to y
    y = tf.reduce_sum(x * 2.0)
    gx, gu, go = tf.gradients(y, [x, unused, other])
    assert gu is None and go is None
    np.testing.assert_allclose(run(gx, {x: [1.0, 2.0]}), [2.0, 2.0])


def test_gradient_of_a_tensor_with_respect_to_itself_is_grad_ys():
    x = tf.placeholder(tf.float64, [3])
    np.testing.assert_allclose(run(tf.gradients(x, x)[0], {x: np.zeros(3)}), np.ones(3))


def test_grad_ys_weights_the_output():
    x = tf.placeholder(tf.float64, [2, 2])
    y = tf.square(x)
    dy = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    g = tf.gradients(y, x, grad_ys=dy)[0]
    xv = np.array([[1.0, -1.0], [0.5, 2.0]])
    np.testing.assert_allclose(run(g, {x: xv}), 2 * xv * [[1, 2], [3, 4]])
    with pytest.raises(ValueError):
        tf.gradients([y], x, grad_ys=[dy, dy])


def test_integer_inputs_get_no_gradient():
    i = tf.placeholder(tf.int32, [3])
    w = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(tf.cast(i * 2, tf.float32) * w)
    gi, gw = tf.gradients(y, [i, w])
    assert gi is None
    np.testing.assert_allclose(run(gw, {i: [1, 2, 3], w: [0.0, 0.0, 0.0]}), [2.0, 4.0, 6.0])


def test_cast_between_floating_types_passes_the_gradient_back():
    x = tf.placeholder(tf.float32, [2])
    y = tf.cast(x, tf.float64) * tf.constant([3.0, 4.0], tf.float64)
    g = tf.gradients(y, x)[0]
    assert g.dtype == tf.float32
    np.testing.assert_allclose(run(g, {x: [1.0, 1.0]}), [3.0, 4.0])


def test_broadcast_gradient_with_shapes_known_only_at_run_time():
    a = tf.placeholder(tf.float64, None)
    b = tf.placeholder(tf.float64, None)
    ga, gb = tf.gradients(a * b, [a, b])
    av, bv = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    gav, gbv = run([ga, gb], {a: av, b: bv})
    np.testing.assert_allclose(gav, np.broadcast_to(bv, (2, 3)))
    np.testing.assert_allclose(gbv, av.sum(0))


def test_sparse_gradient_into_an_element_wise_op_is_densified():
    x = tf.placeholder(tf.float64, [3, 2])
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "TestSparseIdentityGrad"}):
        y = tf.identity(x * 3.0)
    gx = tf.gradients(y, x, grad_ys=tf.constant(np.arange(6.0).reshape(3, 2)))[0]
    np.testing.assert_allclose(run(gx, {x: np.ones((3, 2))}), 3 * np.arange(6.0).reshape(3, 2))


# ---------------------------------------------------------------------------------------------
# Stopping gradients, overrides, missing gradients
# ---------------------------------------------------------------------------------------------
def test_stop_gradients_argument_treats_tensors_as_constants():
    x = tf.placeholder(tf.float64, [2])
    a = x * x
    y = tf.reduce_sum(a * x + x)
    full = tf.gradients(y, x)[0]
    stopped = tf.gradients(y, x, stop_gradients=[a])[0]
    xv = np.array([2.0, 3.0])
    fv, sv = run([full, stopped], {x: xv})
    np.testing.assert_allclose(fv, 3 * xv ** 2 + 1)
    np.testing.assert_allclose(sv, xv ** 2 + 1)


def test_stop_gradients_on_xs_themselves():
    # TF's documented example: with a and b both stopped, d(a + b)/da = d(a + b)/db = 1.
    a = tf.constant(0.0)
    b = 2 * a
    ga, gb = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert run([ga, gb]) == [1.0, 1.0]
    ga, gb = tf.gradients(a + b, [a, b])
    assert run([ga, gb]) == [3.0, 1.0]


def test_stop_gradient_op_blocks_the_gradient():
    # Needs StopGradient marked not differentiable in array_ops.py, as TF does.
    x = tf.placeholder(tf.float64, [2])
    y = tf.reduce_sum(x * tf.stop_gradient(x * x))
    g = tf.gradients(y, x)[0]
    np.testing.assert_allclose(run(g, {x: [2.0, 3.0]}), [4.0, 9.0])
    assert tf.gradients(tf.stop_gradient(x), x) == [None]


def test_gradient_override_map_replaces_the_gradient_of_the_ops_it_covers():
    x = tf.placeholder(tf.float64, [2])
    g = tf.get_default_graph()
    with g.gradient_override_map({"Square": "TestTimesTenSquareGrad"}):
        overridden = tf.square(x)
    plain = tf.square(x)
    go, gp = tf.gradients([overridden], x)[0], tf.gradients([plain], x)[0]
    gov, gpv = run([go, gp], {x: [1.0, 3.0]})
    np.testing.assert_allclose(gov, [10.0, 10.0])
    np.testing.assert_allclose(gpv, [2.0, 6.0])


def test_override_with_an_unregistered_name_raises_lookup_error():
    x = tf.placeholder(tf.float64, [2])
    with tf.get_default_graph().gradient_override_map({"Exp": "TestNeverRegistered"}):
        y = tf.exp(x)
    with pytest.raises(LookupError):
        tf.gradients(y, x)


def test_registering_the_same_gradient_name_twice_is_an_error():
    with pytest.raises(KeyError):
        tf.RegisterGradient("TestTimesTenSquareGrad")(lambda op, grad: [grad])


def test_op_without_gradient_raises_lookup_error():
    x = tf.placeholder(tf.float64, [2])
    y = tf._apply_op(TestNoGradientOp, x=x)
    np.testing.assert_allclose(run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    with pytest.raises(LookupError, match="TestNoGradientOp"):
        tf.gradients(tf.reduce_sum(y), x)


def test_not_differentiable_ops_give_none():
    x = tf.placeholder(tf.float64, [3])
    for y in (tf.floor(x), tf.ceil(x), tf.round(x), tf.rint(x), tf.floor_div(x, 2.0),
              tf.cast(tf.argmax(x), tf.float64), tf.cast(x > 0, tf.float64)):
        assert tf.gradients(y, x) == [None], y.op.type


# ---------------------------------------------------------------------------------------------
# TF's particular choices
# ---------------------------------------------------------------------------------------------
def test_max_and_min_split_the_gradient_among_ties():
    x = tf.placeholder(tf.float64, [2, 3])
    xv = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    gmax = tf.gradients(tf.reduce_max(x, axis=1), x)[0]
    gmin = tf.gradients(tf.reduce_min(x, axis=1), x)[0]
    gmaxv, gminv = run([gmax, gmin], {x: xv})
    np.testing.assert_allclose(gmaxv, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(gminv, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_maximum_and_minimum_give_ties_to_the_first_input():
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [3])
    feed = {x: [1.0, 2.0, 3.0], y: [1.0, 5.0, 0.0]}
    gx, gy = tf.gradients(tf.maximum(x, y), [x, y])
    np.testing.assert_allclose(run([gx, gy], feed), [[1, 0, 1], [0, 1, 0]])
    gx, gy = tf.gradients(tf.minimum(x, y), [x, y])
    np.testing.assert_allclose(run([gx, gy], feed), [[1, 1, 0], [0, 0, 1]])


def test_pow_exponent_gradient_is_zero_where_the_base_is_not_positive():
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [3])
    gx, gy = tf.gradients(tf.pow(x, y), [x, y])
    gxv, gyv = run([gx, gy], {x: [0.0, -2.0, 2.0], y: [2.0, 2.0, 3.0]})
    np.testing.assert_allclose(gyv, [0.0, 0.0, 8.0 * np.log(2.0)])
    np.testing.assert_allclose(gxv, [0.0, -4.0, 12.0])


def test_sign_gradient_is_zeros_and_prod_handles_zeros():
    x = tf.placeholder(tf.float64, [2, 3])
    gs = tf.gradients(tf.sign(x), x)[0]
    gp = tf.gradients(tf.reduce_prod(x, axis=1), x)[0]
    xv = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]])
    gsv, gpv = run([gs, gp], {x: xv})
    np.testing.assert_array_equal(gsv, np.zeros((2, 3)))
    np.testing.assert_allclose(gpv, [[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_floormod_gradient():
    x = tf.placeholder(tf.float64, [3])
    y = tf.placeholder(tf.float64, [])
    gx, gy = tf.gradients(tf.floormod(x, y), [x, y])
    gxv, gyv = run([gx, gy], {x: [7.5, -1.0, 2.5], y: 2.0})
    np.testing.assert_allclose(gxv, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(gyv, -(3.0 - 1.0 + 1.0))  # -sum(floor(x / y))


def test_unary_gradients_reuse_the_forward_output():
    # Tanh, Sigmoid, Exp, Sqrt, Rsqrt and Reciprocal differentiate from y, as TF's *Grad ops:
    # the backward pass must not recompute the function.
    x = tf.placeholder(tf.float64, [2])
    for fn, op_type in ((tf.tanh, "Tanh"), (tf.sigmoid, "Sigmoid"), (tf.exp, "Exp"),
                        (tf.sqrt, "Sqrt"), (tf.rsqrt, "Rsqrt"), (tf.reciprocal, "Reciprocal")):
        y = fn(x)
        before = sum(op.type == op_type for op in tf.get_default_graph().get_operations())
        tf.gradients(y, x)
        after = sum(op.type == op_type for op in tf.get_default_graph().get_operations())
        assert after == before, op_type
        assert any(y in op.inputs for op in y.consumers()), op_type


def test_mean_gradient_with_run_time_axes():
    x = tf.placeholder(tf.float64, None)
    axes = tf.placeholder(tf.int32, [None])
    g = tf.gradients(tf.reduce_mean(x, axes), x)[0]
    xv = np.ones((2, 3, 4))
    np.testing.assert_allclose(run(g, {x: xv, axes: [0, -1]}), np.full((2, 3, 4), 1 / 8))
    np.testing.assert_allclose(run(g, {x: xv, axes: [1]}), np.full((2, 3, 4), 1 / 3))


# ---------------------------------------------------------------------------------------------
# Gradients of gradients
# ---------------------------------------------------------------------------------------------
def test_second_derivative_of_tanh():
    x = tf.placeholder(tf.float64, [4])
    g = tf.gradients(tf.tanh(x), x)[0]
    h = tf.gradients(g, x)[0]
    xv = np.array([-1.0, 0.0, 0.5, 2.0])
    t = np.tanh(xv)
    np.testing.assert_allclose(run(h, {x: xv}), -2 * t * (1 - t * t))


def test_hessian_vector_product_with_matmul():
    # f(x) = sum(x^3 * (A x)); H v = 6 x (A x) v + 3 x^2 (A v) + A^T (3 x^2 v).
    rng = np.random.RandomState(0)
    a_value = rng.standard_normal((4, 4))
    xv, vv = rng.standard_normal((4, 1)), rng.standard_normal((4, 1))
    x = tf.placeholder(tf.float64, [4, 1])
    v = tf.placeholder(tf.float64, [4, 1])
    a = tf.constant(a_value)
    f = tf.reduce_sum(tf.pow(x, 3.0) * tf.matmul(a, x))
    g = tf.gradients(f, x)[0]
    hv = tf.gradients(tf.reduce_sum(g * v), x)[0]
    expected = (6 * xv * (a_value @ xv) * vv + 3 * xv ** 2 * (a_value @ vv)
                + a_value.T @ (3 * xv ** 2 * vv))
    np.testing.assert_allclose(run(hv, {x: xv, v: vv}), expected, rtol=1e-10)


def test_hessian_vector_product_element_wise_and_reductions():
    # f(x) = sum(tanh(x) x^2) + prod(x) + mean(exp(x)): the first and last terms have a
    # diagonal Hessian; prod's is prod / (x_i x_j) off the diagonal and 0 on it.
    xv = np.array([0.5, -1.5, 2.0])
    vv = np.array([1.0, 2.0, -1.0])
    x = tf.placeholder(tf.float64, [3])
    v = tf.placeholder(tf.float64, [3])
    f = tf.reduce_sum(tf.tanh(x) * x * x) + tf.reduce_prod(x) + tf.reduce_mean(tf.exp(x))
    g = tf.gradients(f, x)[0]
    hv = tf.gradients(tf.reduce_sum(g * v), x)[0]
    t = np.tanh(xv)
    s = 1 - t * t
    diag = 2 * t + 4 * xv * s - 2 * xv * xv * t * s + np.exp(xv) / 3
    prod_h = np.prod(xv) / np.outer(xv, xv)
    np.fill_diagonal(prod_h, 0.0)
    np.testing.assert_allclose(run(hv, {x: xv, v: vv}), diag * vv + prod_h @ vv, rtol=1e-10)


def test_hessians_of_a_small_function():
    # f(x) = sum(x^3) + prod(x): H = diag(6 x) + prod / (x_i x_j) off the diagonal.
    xv = np.array([1.0, 2.0, -0.5])
    x = tf.placeholder(tf.float64, [3])
    h = tf.hessians(tf.reduce_sum(x * x * x) + tf.reduce_prod(x), x)[0]
    assert h.shape.as_list() == [3, 3]
    expected = np.prod(xv) / np.outer(xv, xv)
    np.fill_diagonal(expected, 6 * xv)
    np.testing.assert_allclose(run(h, {x: xv}), expected, rtol=1e-10)


def test_raw_add_and_div_ops_have_gradients():
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    s = tf._apply_op(math_ops.Add, x=x, y=y)
    d = tf._apply_op(math_ops.Div, x=x, y=y)
    gx, gy = tf.gradients([s, d], [x, y])
    gxv, gyv = run([gx, gy], {x: [1.0, 4.0], y: [2.0, 8.0]})
    np.testing.assert_allclose(gxv, [1.5, 1.125])
    np.testing.assert_allclose(gyv, [1 - 0.25, 1 - 4 / 64])


def test_full_reductions_of_an_input_of_unknown_rank():
    x = tf.placeholder(tf.float64, None)
    gs, gm, gp = [tf.gradients(f(x), x)[0] for f in (tf.reduce_sum, tf.reduce_mean, tf.reduce_prod)]
    xv = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    gsv, gmv, gpv = run([gs, gm, gp], {x: xv})
    np.testing.assert_allclose(gsv, np.ones((3, 2)))
    np.testing.assert_allclose(gmv, np.full((3, 2), 1 / 6))
    np.testing.assert_allclose(gpv, 720.0 / xv)


def test_unconnected_gradients_none_or_zero():
    x = tf.constant([1.0, 2.0])
    unused = tf.placeholder(tf.float64, [None, 3])
    y = tf.reduce_sum(x * 3.0)
    assert tf.gradients(y, [x, unused])[1] is None
    gx, gu = tf.gradients(y, [x, unused], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert gu.dtype == tf.float64
    with tf.Session() as sess:
        got_x, got_u = sess.run([gx, gu], {unused: np.ones((2, 3))})
    np.testing.assert_array_equal(got_x, [3.0, 3.0])
    np.testing.assert_array_equal(got_u, np.zeros((2, 3)))
    assert tf.gradients(y, unused, unconnected_gradients="none") == [None]
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tf.gradients(y, x, unconnected_gradients="maybe")


def test_gradients_across_graphs_are_rejected():
    other = tf.Graph()
    with other.as_default():
        a = tf.constant(1.0)
    b = tf.constant(2.0) * 3.0
    with pytest.raises(ValueError, match="same graph"):
        tf.gradients(b, a)
