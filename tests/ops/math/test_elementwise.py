"""Element-wise math: arithmetic, unary functions, comparisons, logic, Select/SelectV2, Cast,
ClipByValue, and the Python operators of tf.Tensor (TF1 graph semantics)."""
import warnings

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_run_error
from tensorweave.framework import tensor_util
from tensorweave.ops import math as math_ops
from tensorweave.testing.op_test import check_op, evaluate

RNG = np.random.RandomState(0)


def rand(*shape, dtype=np.float32, low=-3, high=4):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(dtype)
    if dtype.kind in "iu":
        return RNG.randint(max(low, 0) if dtype.kind == "u" else low, high, size=shape).astype(dtype)
    return RNG.randn(*shape).astype(dtype)


# -- binary arithmetic --------------------------------------------------------------------------
def nonzero(a):
    return np.where(a == 0, 1, a).astype(a.dtype)


BINARY = [
    (tf.add, np.add, "AddV2", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.complex64]),
    (tf.subtract, np.subtract, "Sub", [np.float32, np.int32, np.int64, np.complex128]),
    (tf.multiply, np.multiply, "Mul", [np.float16, np.float64, np.int32, np.complex64]),
    (tf.maximum, np.maximum, "Maximum", [np.float32, np.int32, np.int64, np.uint8]),
    (tf.minimum, np.minimum, "Minimum", [np.float64, np.int32, np.int16]),
    (tf.squared_difference, lambda a, b: np.square(a - b), "SquaredDifference",
     [np.float32, np.int32, np.int64]),
    (tf.floordiv, lambda a, b: np.floor_divide(a, nonzero(b)), "FloorDiv", [np.float32, np.int32, np.int64]),
    (tf.floormod, lambda a, b: np.remainder(a, nonzero(b)), "FloorMod", [np.float64, np.int32, np.int64]),
    (tf.truncatediv, lambda a, b: np.trunc(a / nonzero(b)).astype(a.dtype), "TruncateDiv",
     [np.int32, np.int64, np.float32]),
    (tf.truncatemod, lambda a, b: np.fmod(a, nonzero(b)), "TruncateMod", [np.int32, np.float64]),
    (tf.realdiv, lambda a, b: a / nonzero(b), "RealDiv", [np.float32, np.float64, np.complex64]),
    (tf.div_no_nan, lambda a, b: np.where(b == 0, 0, a / nonzero(b)).astype(a.dtype), "DivNoNan",
     [np.float32, np.float64]),
    (tf.atan2, np.arctan2, "Atan2", [np.float32, np.float64]),
]


@pytest.mark.parametrize("fn,ref,op_type,dtypes", BINARY, ids=[b[2] for b in BINARY])
def test_binary_ops_broadcast_values_and_dtypes(fn, ref, op_type, dtypes):
    for dtype in dtypes:
        a, b = rand(2, 3, dtype=dtype), rand(3, dtype=dtype)
        if op_type in ("FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "RealDiv"):
            b = nonzero(b)
        if op_type == "DivNoNan":
            b[0] = 0
        out = fn(a, b)
        assert out.op.type == op_type and out.shape.as_list() == [2, 3]
        tol = 1e-2 if dtype == np.float16 else 1e-5
        check_op(out, ref(a, b), rtol=tol, atol=tol)


@pytest.mark.parametrize("fn,ref,op_type,dtypes", BINARY[:6], ids=[b[2] for b in BINARY[:6]])
def test_binary_ops_with_unknown_shapes_use_runtime_checks(fn, ref, op_type, dtypes):
    dtype = dtypes[0]
    x = tf.placeholder(tf.as_dtype(dtype), [None, 3])
    y = tf.placeholder(tf.as_dtype(dtype))
    out = fn(x, y)
    assert out.shape.ndims is None
    a, b = rand(4, 3, dtype=dtype), rand(1, 3, dtype=dtype)
    check_op(out, ref(a, b), feed_dict={x: a, y: b}, rtol=1e-5)
    msg = str(assert_run_error(out, {x: a, y: rand(2, dtype=dtype)}))
    assert "Incompatible shapes: [4,3] vs. [2]" in msg


def test_static_shape_mismatch_is_a_graph_construction_error():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        tf.equal(tf.zeros([2, 4]), tf.zeros([3, 1, 3]))
    partial = tf.placeholder(tf.float32, [None, 3]) * tf.zeros([5, 1, 1])
    assert partial.shape.as_list() == [5, None, 3]


def test_add_op_types_and_names_match_tf():
    x = tf.placeholder(tf.float32, [2], name="x")
    s = x + 1
    assert (s.op.type, s.op.name) == ("AddV2", "add")
    assert s.op.inputs[1].op.name == "add/y" and s.op.inputs[1].dtype == tf.float32
    r = 2 - x
    assert (r.op.type, r.op.name) == ("Sub", "sub") and r.op.inputs[0].op.name == "sub/x"
    t = tf.add(x, x)
    assert (t.op.type, t.op.name) == ("AddV2", "Add_1")  # op names are unique ignoring case
    assert tf.add(x, x, name="plus").op.name == "plus"
    strings = tf.add(tf.constant(["a", "b"]), "c")
    assert strings.op.type == "Add"
    check_op(strings, np.array([b"ac", b"bc"], dtype=object))
    check_op(tf.constant(["x"]) + "y", np.array([b"xy"], dtype=object))
    check_op(tf.add(["p", "q"], "r"), np.array([b"pr", b"qr"], dtype=object))


def test_integer_division_by_zero_fails_like_tf():
    a = tf.constant([1, 2])
    b = tf.placeholder(tf.int32, [2])
    for out in (tf.floordiv(a, b), tf.floormod(a, b), tf.div(a, b), a // b, a % b):
        assert "Integer division by zero" in str(assert_run_error(out, {b: [0, 1]}))
    # TF 2.21 fails the truncating ones with InternalError (tests/data/tf_malformed_expected.json)
    for out in (tf.truncatediv(a, b), tf.truncatemod(a, b)):
        assert_run_error(out, {b: [0, 1]}, error=tf.errors.InternalError, match="Unexpected error in binary operator")
    assert evaluate(a // b, {b: [2, -1]}).tolist() == [0, -2]


def test_float_division_by_zero_gives_inf_nan_without_warnings():
    x = tf.constant([1.0, -1.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:
        got = evaluate([x / 0.0, tf.floordiv(x, 0.0), tf.log(x), tf.sqrt(x - 1)])
    assert got[0][0] == np.inf and got[0][1] == -np.inf and np.isnan(got[0][2])
    assert got[1][0] == np.inf and np.isnan(got[1][2])
    assert got[2][1] != got[2][1] and got[2][2] == -np.inf
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_mod_and_floordiv_follow_the_divisor_sign():
    a = np.array([-7, 7, -7, 7], np.int32)
    b = np.array([2, -2, -2, 2], np.int32)
    check_op(tf.floormod(a, b), [1, -1, -1, 1])
    check_op(tf.mod(a, b), [1, -1, -1, 1])
    check_op(tf.floordiv(a, b), [-4, -4, 3, 3])
    check_op(tf.truncatediv(a, b), [-3, -3, 3, 3])
    check_op(tf.truncatemod(a, b), [-1, 1, -1, 1])
    check_op(tf.floormod([5.5, -5.5], [2.0, 2.0]), np.array([1.5, 0.5], np.float32))


def test_truediv_casts_integers_like_tf():
    for dtype, want in ((tf.int32, tf.float64), (tf.int64, tf.float64), (tf.int16, tf.float32),
                        (tf.uint8, tf.float32), (tf.float16, tf.float16), (tf.float32, tf.float32)):
        x, y = tf.constant([7, 9], dtype), tf.constant([2, 2], dtype)
        for out in (x / y, tf.truediv(x, y), tf.divide(x, y)):
            assert out.dtype == want and out.op.type == "RealDiv"
            check_op(out, np.array([3.5, 4.5], want.as_numpy_dtype))
    check_op(tf.constant([-7]) / 2, np.array([-3.5]))
    with tf.Graph().as_default():
        assert (tf.constant(7) / 2).op.name == "truediv"
    assert tf.divide(7, 2, name="d").op.name == "d"
    with pytest.raises(TypeError, match="same dtype"):
        tf.truediv(tf.constant([1]), tf.constant([2.0]))
    with pytest.raises(TypeError, match="Invalid dtype"):
        tf.constant([True]) / tf.constant([False])


def test_tf1_div_floors_integers_and_divides_floats():
    i = tf.div(tf.constant([7, -7]), 2)
    assert (i.op.type, i.op.name, i.dtype) == ("FloorDiv", "div", tf.int32)
    check_op(i, [3, -4])
    f = tf.div(tf.constant([7.0, -7.0]), 2)
    assert f.op.type == "RealDiv"
    check_op(f, np.array([3.5, -3.5], np.float32))
    with pytest.raises(TypeError):
        tf.div(tf.constant([1]), tf.constant([1.0]))


def test_pow():
    check_op(tf.pow(tf.constant([2.0, 4.0]), 0.5), np.array([2 ** 0.5, 2.0], np.float32))
    check_op(tf.constant([2, 3]) ** 3, [8, 27])
    check_op(2 ** tf.constant([2, 3]), [4, 8])
    with tf.Graph().as_default():
        assert tf.pow(2.0, 3.0).op.name == "Pow"
    y = tf.placeholder(tf.int32, [2])
    assert "Integers to negative integer powers are not allowed" in str(assert_run_error(
        tf.pow(tf.constant([2, 2]), y), {y: [-1, 2]}))


def test_realdiv_has_no_integer_kernel():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="RealDiv"):
            sess.run(tf.realdiv(tf.constant([1]), tf.constant([2])))


# -- unary --------------------------------------------------------------------------------------
UNARY = [
    (tf.negative, np.negative, "Neg", [np.float32, np.int32, np.int64, np.complex64]),
    (tf.abs, np.abs, "Abs", [np.float32, np.float64, np.int32]),
    (tf.sign, np.sign, "Sign", [np.float32, np.int64]),
    (tf.square, np.square, "Square", [np.float32, np.int32, np.uint8, np.complex128]),
    (tf.exp, np.exp, "Exp", [np.float32, np.float64, np.complex64]),
    (tf.expm1, np.expm1, "Expm1", [np.float32]),
    (tf.sin, np.sin, "Sin", [np.float32, np.float64]),
    (tf.cos, np.cos, "Cos", [np.float64]),
    (tf.tan, np.tan, "Tan", [np.float32]),
    (tf.atan, np.arctan, "Atan", [np.float32]),
    (tf.sinh, np.sinh, "Sinh", [np.float64]),
    (tf.cosh, np.cosh, "Cosh", [np.float32, np.float64]),
    (tf.asinh, np.arcsinh, "Asinh", [np.float64]),
    (tf.tanh, np.tanh, "Tanh", [np.float16, np.float32, np.float64]),
    (tf.sigmoid, lambda a: 1 / (1 + np.exp(-a.astype(np.float64))), "Sigmoid", [np.float32, np.float64]),
    (tf.floor, np.floor, "Floor", [np.float32]),
    (tf.ceil, np.ceil, "Ceil", [np.float64]),
    (tf.round, np.round, "Round", [np.float32]),
    (tf.rint, np.rint, "Rint", [np.float64]),
    (tf.is_finite, np.isfinite, "IsFinite", [np.float32]),
]


@pytest.mark.parametrize("fn,ref,op_type,dtypes", UNARY, ids=[u[2] for u in UNARY])
def test_unary_ops(fn, ref, op_type, dtypes):
    for dtype in dtypes:
        a = rand(2, 3, dtype=dtype) * (3 if np.dtype(dtype).kind == "f" else 1)
        out = fn(a)
        assert out.op.type == op_type and out.shape.as_list() == [2, 3]
        tol = 2e-3 if dtype == np.float16 else 1e-6
        check_op(out, ref(a), rtol=tol, atol=tol)


POSITIVE = [(tf.sqrt, np.sqrt, "Sqrt"), (tf.rsqrt, lambda a: 1 / np.sqrt(a), "Rsqrt"),
            (tf.log, np.log, "Log"), (tf.log1p, np.log1p, "Log1p"),
            (tf.reciprocal, np.reciprocal, "Reciprocal"), (tf.acosh, np.arccosh, "Acosh")]


@pytest.mark.parametrize("fn,ref,op_type", POSITIVE, ids=[p[2] for p in POSITIVE])
def test_unary_ops_on_positive_inputs(fn, ref, op_type):
    for dtype in (np.float32, np.float64):
        a = (np.abs(rand(3, 2, dtype=dtype)) + 1).astype(dtype)
        out = fn(tf.placeholder(tf.as_dtype(dtype), [None, 2]))
        assert out.op.type == op_type and out.shape.as_list() == [None, 2]
        check_op(out, ref(a), feed_dict={out.op.inputs[0]: a}, rtol=1e-6)


UNIT_INTERVAL = [(tf.asin, np.arcsin, "Asin"), (tf.acos, np.arccos, "Acos"), (tf.atanh, np.arctanh, "Atanh")]


@pytest.mark.parametrize("fn,ref,op_type", UNIT_INTERVAL, ids=[p[2] for p in UNIT_INTERVAL])
def test_unary_ops_on_the_unit_interval(fn, ref, op_type):
    for dtype in (np.float32, np.float64):
        a = RNG.uniform(-0.95, 0.95, (2, 3)).astype(dtype)
        out = fn(a)
        assert out.op.type == op_type and out.dtype == tf.as_dtype(dtype)
        check_op(out, ref(a), rtol=1e-6)


def test_raw_div_op_truncates_integers_and_divides_floats():
    from tensorweave.framework.op_def_library import apply_op
    ints = apply_op(math_ops.Div, x=tf.constant([7, -7, 7, -7]), y=tf.constant([2, 2, -2, -2]))
    check_op(ints, np.int32([3, -3, -3, 3]))      # C division, as TF's Div kernel
    floats = apply_op(math_ops.Div, x=tf.placeholder(tf.float64, [None]), y=tf.constant(4.0, tf.float64))
    check_op(floats, np.float64([0.25, -0.5]), feed_dict={floats.op.inputs[0]: [1.0, -2.0]})
    assert "Integer division by zero" in str(assert_run_error(apply_op(math_ops.Div, x=tf.constant([1]),
                                                            y=tf.constant([0]))))


def test_unary_special_values():
    check_op(tf.round([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6]),
             np.array([0, 2, 2, -0, -2, 2, -3], np.float32))
    i = tf.constant([1, 2])
    assert tf.round(i) is i
    check_op(tf.sign([-3, 0, 4]), [-1, 0, 1])
    check_op(tf.abs(tf.constant([-2 ** 31])), [-2 ** 31])
    check_op(tf.sigmoid([-100.0, 100.0, -20.0, 0.5]),
             np.array([0.0, 1.0, 2.0611537e-09, 0.62245935], np.float32), rtol=1e-6, atol=0)
    check_op(tf.sigmoid(tf.constant(0.0)), np.float32(0.5))
    check_op(tf.rsqrt([0.0, 4.0]), np.array([np.inf, 0.5], np.float32))
    nan = [np.nan, np.inf, -1.0]
    check_op(tf.is_nan(nan), [True, False, False])
    check_op(tf.is_inf(nan), [False, True, False])


def test_abs_of_complex_is_complex_abs_with_real_dtype():
    out = tf.abs(tf.constant([3 + 4j], tf.complex64))
    assert (out.op.type, out.op.name, out.dtype) == ("ComplexAbs", "Abs", tf.float32)
    check_op(out, np.array([5.0], np.float32))
    assert abs(tf.constant([1 + 1j])).dtype == tf.float64


def test_unary_dtype_rejections():
    for fn, value in ((tf.sqrt, tf.constant([4])), (tf.log, tf.constant([4])),
                      (tf.negative, tf.constant([1], tf.uint8)), (tf.abs, tf.constant([1], tf.uint8)),
                      (tf.sigmoid, tf.constant([1])), (tf.floor, tf.constant([1])),
                      (tf.negative, tf.constant([True]))):
        with pytest.raises(TypeError):
            fn(value)


# -- comparisons and logic ------------------------------------------------------------------------
@pytest.mark.parametrize("fn,ref,op_type", [(tf.less, np.less, "Less"),
                                            (tf.less_equal, np.less_equal, "LessEqual"),
                                            (tf.greater, np.greater, "Greater"),
                                            (tf.greater_equal, np.greater_equal, "GreaterEqual"),
                                            (tf.equal, np.equal, "Equal"),
                                            (tf.not_equal, np.not_equal, "NotEqual")])
def test_comparisons(fn, ref, op_type):
    for dtype in (np.float32, np.int32, np.int64):
        a, b = rand(4, 1, dtype=dtype, low=-1, high=2), rand(3, dtype=dtype, low=-1, high=2)
        out = fn(a, b)
        assert out.op.type == op_type and out.dtype == tf.bool
        check_op(out, ref(a, b))


def test_equality_on_strings_bools_and_complex():
    check_op(tf.equal(tf.constant(["a", "b"]), "a"), [True, False])
    check_op(tf.not_equal(tf.constant([True, False]), True), [False, True])
    check_op(tf.equal(tf.constant([1 + 1j]), 1 + 1j), [True])
    with pytest.raises(TypeError):
        tf.less(tf.constant(["a"]), "b")
    with pytest.raises(TypeError):
        tf.less(tf.constant([True]), False)
    with pytest.raises(TypeError):
        tf.equal(tf.constant([1.0]), tf.constant([1]))


def test_logical_ops_and_operators():
    a = tf.constant([True, True, False, False])
    b = tf.constant([True, False, True, False])
    check_op(tf.logical_and(a, b), [True, False, False, False])
    check_op(tf.logical_or(a, b), [True, True, True, False])
    check_op(tf.logical_not(a), [False, False, True, True])
    xor = tf.logical_xor(a, b)
    assert (xor.op.type, xor.op.name) == ("LogicalAnd", "LogicalXor")
    check_op(xor, [False, True, True, False])
    for out, name, want in ((a & b, "and", [True, False, False, False]),
                            (a | b, "or", [True, True, True, False]),
                            (a ^ b, "xor", [False, True, True, False]),
                            (~a, "LogicalNot_1", [False, False, True, True]),
                            (True & b, "and_1", [True, False, True, False])):
        assert out.op.name == name
        check_op(out, want)
    with pytest.raises(TypeError):
        ~tf.constant([1])
    with pytest.raises(TypeError):
        tf.logical_and(tf.constant([1.0]), a)


# -- Python operators ----------------------------------------------------------------------------
def test_all_operators_build_tf_ops():
    x = tf.constant([[1.0, -2.0], [3.0, 4.0]])
    a = x.eval(session=tf.Session())
    cases = [(x + 2, a + 2, "AddV2"), (2 + x, 2 + a, "AddV2"), (x - 2, a - 2, "Sub"),
             (2 - x, 2 - a, "Sub"), (x * 3, a * 3, "Mul"), (3 * x, 3 * a, "Mul"),
             (x / 2, a / 2, "RealDiv"), (2 / x, 2 / a, "RealDiv"), (x // 3, a // 3, "FloorDiv"),
             (7 // x, 7 // a, "FloorDiv"), (x % 3, a % 3, "FloorMod"), (7 % x, 7 % a, "FloorMod"),
             (x ** 2, a ** 2, "Pow"), (2 ** x, 2 ** a, "Pow"), (-x, -a, "Neg"), (abs(x), abs(a), "Abs"),
             (x @ x, a @ a, "MatMul"), (a @ x, a @ a, "MatMul"), (x < 2, a < 2, "Less"),
             (x <= 1, a <= 1, "LessEqual"), (x > 1, a > 1, "Greater"), (x >= 3, a >= 3, "GreaterEqual"),
             (2 > x, a < 2, "Less"), (np.float32(2) * x, 2 * a, "Mul"), (a + x, a + a, "AddV2")]
    for out, want, op_type in cases:
        assert out.op.type == op_type, (out, op_type)
        check_op(out, want.astype(np.bool_ if want.dtype == np.bool_ else np.float32), rtol=1e-6)
    assert [o.name for o in x.graph.get_operations() if o.type == "MatMul"] == ["matmul", "matmul_1"]


def test_operators_convert_the_other_operand_to_the_tensor_dtype():
    f = tf.constant([1.0])
    i = tf.constant([1])
    assert (f + 1).dtype == tf.float32 and (1 + f).dtype == tf.float32
    check_op(f + np.float64(1.5), np.array([2.5], np.float32))
    check_op(f + np.array([1.5]), np.array([2.5], np.float32))
    for bad in (lambda: i + 1.5, lambda: 1.5 + i, lambda: f + i, lambda: i * f, lambda: tf.add(f, i),
                lambda: i < 0.5):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(TypeError):
        tf.constant([True]) + tf.constant([True])  # AddV2 has no bool kernel in TF


def test_tensor_equality_stays_identity_based():
    x = tf.constant([1.0])
    assert (x == x) is True and (x == tf.constant([1.0])) is False and (x != x) is False
    assert "__eq__" not in math_ops.OVERLOADED_OPERATORS
    for name in ("__add__", "__radd__", "__matmul__", "__rmatmul__", "__invert__", "__xor__",
                 "__rxor__", "__lt__", "__neg__", "__abs__", "__rpow__", "__rfloordiv__"):
        assert name in math_ops.OVERLOADED_OPERATORS
    assert {x: 1}[x] == 1


def test_operators_work_on_variables():
    v = tf.Variable([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([v + 1, 1 - v, v * v, -v, v / 2, v > 1])
    np.testing.assert_allclose(got[0], [2, 3])
    np.testing.assert_allclose(got[1], [0, -1])
    np.testing.assert_allclose(got[2], [1, 4])
    np.testing.assert_allclose(got[3], [-1, -2])
    np.testing.assert_allclose(got[4], [0.5, 1])
    assert got[5].tolist() == [False, True]


# -- where / select ------------------------------------------------------------------------------
def test_tf1_where_select_rules():
    x, y = rand(2, 3), rand(2, 3)
    full = np.array([[True, False, True], [False, True, False]])
    out = tf.where(full, x, y)
    assert (out.op.type, out.op.name) == ("Select", "Select")
    check_op(out, np.where(full, x, y))
    check_op(tf.where([True, False], x, y), np.where([[True], [False]], x, y))
    check_op(tf.where(True, x, y), x)
    with pytest.raises(ValueError):
        tf.where([True, False, True], x, y)  # a vector must match the first dimension
    with pytest.raises(ValueError):
        tf.where(full, x, rand(3, 2))
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(full, x)


def test_select_runtime_errors():
    c = tf.placeholder(tf.bool)
    t = tf.placeholder(tf.float32)
    e = tf.placeholder(tf.float32)
    out = tf.where(c, t, e)
    assert out.shape.ndims is None
    ones = np.ones((2, 2), np.float32)
    check_op(out, [[1, 1], [0, 0]], feed_dict={c: [True, False], t: ones, e: 0 * ones})
    assert "Number of batches of 'then' must match size of 'cond'" in str(assert_run_error(
        out, {c: [True, False, True], t: ones, e: ones}))
    assert "'then' and 'else' must have the same size" in str(assert_run_error(
        out, {c: [True, False], t: ones, e: np.ones((2, 3), np.float32)}))


def test_where_v2_broadcasts():
    out = tf.where_v2([True, False, True], tf.ones([2, 3]), 0.0)
    assert out.op.type == "SelectV2" and out.shape.as_list() == [2, 3]
    check_op(out, np.array([[1, 0, 1], [1, 0, 1]], np.float32))
    with pytest.raises(ValueError):
        tf.where_v2([True, False], tf.ones([2, 3]), 0.0)
    c = tf.placeholder(tf.bool)
    assert "must be broadcastable" in str(assert_run_error(tf.where_v2(c, tf.ones([2, 2]), 0.0), {c: [True] * 3}))


def test_where_with_condition_only_returns_coordinates():
    out = tf.where(tf.constant([[True, False], [False, True]]))
    assert out.dtype == tf.int64
    check_op(out, np.array([[0, 0], [1, 1]], np.int64))


# -- cast ------------------------------------------------------------------------------------------
def test_cast_semantics_match_tf():
    f = tf.constant([1.7, -1.7, 2.5, np.nan, 1e10, -1e10])
    out = tf.cast(f, tf.int32)
    assert (out.op.type, out.op.name) == ("Cast", "Cast")
    assert out.op.get_attr("SrcT") == tf.float32 and out.op.get_attr("DstT") == tf.int32
    check_op(out, [1, -1, 2, -2 ** 31, -2 ** 31, -2 ** 31])
    check_op(tf.cast([-1.0, 300.0, 2.7], tf.uint8), np.array([255, 44, 2], np.uint8))
    check_op(tf.cast([0.0, 0.5, -1.0, np.nan], tf.bool), [False, True, True, True])
    check_op(tf.cast([True, False], tf.float32), np.array([1, 0], np.float32))
    check_op(tf.cast(tf.constant([1 + 2j]), tf.float32), np.array([1], np.float32))
    check_op(tf.cast(tf.constant([0j, 1j, 2 + 0j]), tf.bool), [False, False, True])
    check_op(tf.cast([0, 2, -1], tf.bool), [False, True, True])
    check_op(tf.cast([-1, 300], tf.uint8), np.array([255, 44], np.uint8))
    check_op(tf.cast(1.5, tf.int32), np.int32(1))
    x = tf.constant([1.0])
    assert tf.cast(x, tf.float32) is x
    assert tf.to_float(tf.constant([1])).op.name == "ToFloat"
    for fn, dtype in ((tf.to_double, tf.float64), (tf.to_int32, tf.int32), (tf.to_int64, tf.int64)):
        assert fn(x).dtype == dtype
    p = tf.placeholder(tf.float32, [None, 2])
    assert tf.cast(p, tf.int64).shape.as_list() == [None, 2]


def test_cast_strings_is_unimplemented_at_run_time():
    out = tf.cast(tf.constant(["1"]), tf.float32)
    str(assert_run_error(out, error=tf.errors.UnimplementedError))


def test_saturate_cast_clamps_instead_of_wrapping():
    check_op(tf.saturate_cast([-5.0, 300.0, 7.9], tf.uint8), np.array([0, 255, 7], np.uint8))
    check_op(tf.saturate_cast([3e9, -3e9], tf.int32), [2147483520, -2 ** 31])
    check_op(tf.saturate_cast(tf.constant([70000, -1]), tf.int16), np.array([32767, -1], np.int16))


def test_constant_folding_sees_through_cast_and_arithmetic():
    two = tf.constant(2)
    assert tensor_util.constant_value(tf.cast(two, tf.int64)).dtype == np.int64
    assert int(tensor_util.constant_value(two * 3 + 1)) == 7
    assert int(tensor_util.constant_value(-(tf.constant(9) // 2))) == -4
    assert tensor_util.constant_value(tf.placeholder(tf.int32) + 1) is None


# -- clip_by_value, scalar_mul -------------------------------------------------------------------
def test_clip_by_value():
    t = np.array([[1.0, 5.0, 9.0]], np.float32)
    out = tf.clip_by_value(t, 2.0, 6.0)
    assert (out.op.type, out.op.name) == ("Maximum", "clip_by_value")
    check_op(out, np.clip(t, 2, 6))
    check_op(tf.clip_by_value(t, [2.0, 0.0, 8.5], 6.0), np.array([[2, 5, 8.5]], np.float32))
    check_op(tf.clip_by_value(tf.constant([1, 5, 9]), 2, 6), [2, 5, 6])
    with pytest.raises(ValueError, match="incompatible"):
        tf.clip_by_value(tf.constant([1.0, 5.0, 9.0]), tf.ones([2, 3]), 6.0)


def test_clip_by_value_op():
    t = tf.placeholder(tf.float32, [None])
    lo = tf.placeholder(tf.float32)
    out = tf._apply_op(math_ops.ClipByValue, t=t, clip_value_min=lo, clip_value_max=4.0)
    assert out.shape.as_list() == [None]
    check_op(out, np.array([1, 3, 4], np.float32), feed_dict={t: [0, 3, 9], lo: 1.0})
    assert "must be either scalars" in str(assert_run_error(out, {t: [0, 3, 9], lo: [1.0, 2.0]}))
    with pytest.raises(ValueError):
        tf._apply_op(math_ops.ClipByValue, t=tf.zeros([3]), clip_value_min=tf.zeros([2]),
                     clip_value_max=1.0)


def test_scalar_mul():
    check_op(tf.scalar_mul(2, tf.constant([1.0, 2.0])), np.array([2, 4], np.float32))
    with pytest.raises(ValueError, match="Only scalar multiply"):
        tf.scalar_mul([1.0, 2.0], tf.constant([1.0, 2.0]))
