"""Op cases for math, array and nn ops outside the gradient-check table: comparisons and logic,
arg reductions, shapes, one-hot, unique, where, top-k membership, the remapper's fused ops,
gradient helpers, printing and assertions, Python functions."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.math.bucketize import bucketize
from tests.op_cases import OpCase, raw


def _floats(*shape):
    return lambda rng: [rng.randn(*shape).astype(np.float32)]


def _comparisons(a, b):
    return [tf.equal(a, b), tf.not_equal(a, b), tf.less(a, b), tf.less_equal(a, b), tf.greater(a, b),
            tf.greater_equal(a, b)]


def _logic(a, b):
    p, q = a > 0, b > 0
    return [tf.logical_and(p, q), tf.logical_or(p, q), tf.logical_not(p), tf.reduce_all(p, 1), tf.reduce_any(q)]


def _special_values(a):
    x = tf.concat([a, tf.constant([np.inf, -np.inf, np.nan], tf.float32)], 0)
    return [tf.is_inf(x), tf.is_nan(x), tf.is_finite(x)]


def _shapes(a):
    ones = raw("OnesLike", a)
    return [tf.shape(a), tf.shape_n([a, a[0]]), tf.size(a), tf.rank(a), tf.ones_like(a), tf.zeros_like(a),
            raw("Shape", a, out_type=tf.int64), raw("ShapeN", [a, ones]), raw("Size", a), raw("Rank", a),
            ones, raw("ZerosLike", a)]


def _unique(a):
    y, idx = tf.unique(a)
    y2, idx2, count = tf.unique_with_counts(a)
    return [y, idx, y2, idx2, count]


def _python_functions(a):
    double = tf.py_func(lambda v: v * 2, [a], tf.float32, stateful=True)
    square = tf.py_func(lambda v: v * v, [a], tf.float32, stateful=False)
    return [double, square]


def _print_and_assert(a):
    check = tf.Assert(tf.reduce_all(tf.is_finite(a)), [a])
    printed = tf.print("op case:", a, output_stream="file:///dev/null")
    with tf.control_dependencies([check, printed, tf.no_op()]):
        return [tf.identity(a), tf.strings.format("value {}", [a])]


def _fused_matmul(a, b, bias):
    return raw("_FusedMatMul", a, b, [bias], fused_ops=["BiasAdd", "Relu"])


def _fused_conv(x, w, bias):
    return raw("_FusedConv2D", x, w, [bias], fused_ops=["BiasAdd", "Relu"], strides=[1, 1, 1, 1], padding="SAME")


def _broadcast_gradient_args():
    return raw("BroadcastGradientArgs", tf.constant([2, 1, 3]), tf.constant([3]))


def _in_top_k(predictions):
    targets = tf.constant([1, 0, 3])
    return [tf.nn.in_top_k(predictions, targets, 2), raw("InTopK", predictions, targets, k=1)]


CASES = [
    OpCase("math:comparisons", _comparisons, lambda rng: [rng.randint(-2, 3, (2, 3)).astype(np.float32),
                                                          rng.randint(-2, 3, (3,)).astype(np.float32)],
           ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"),
           expected=lambda a, b: [a == b, a != b, a < b, a <= b, a > b, a >= b]),
    OpCase("math:logic", _logic, lambda rng: [rng.randn(2, 3), rng.randn(2, 3)],
           ("LogicalAnd", "LogicalOr", "LogicalNot", "All", "Any"),
           expected=lambda a, b: [(a > 0) & (b > 0), (a > 0) | (b > 0), ~(a > 0), np.all(a > 0, 1), np.any(b > 0)]),
    OpCase("math:special_values", _special_values, _floats(3), ("IsInf", "IsNan", "IsFinite")),
    OpCase("math:argmax_argmin", lambda a: [tf.argmax(a, 1), tf.argmin(a, 0, output_type=tf.int32)], _floats(3, 4),
           ("ArgMax", "ArgMin"), expected=lambda a: [np.argmax(a, 1), np.argmin(a, 0).astype(np.int32)]),
    OpCase("math:bucketize", lambda a: bucketize(a, [-1.0, 0.0, 0.5]), _floats(2, 3), ("Bucketize",),
           expected=lambda a: [np.searchsorted([-1.0, 0.0, 0.5], a, side="right").astype(np.int32)]),
    OpCase("math:lin_space", lambda: tf.lin_space(tf.constant(-1.0), tf.constant(2.0), 7), ops=("LinSpace",),
           expected=lambda: [np.linspace(-1, 2, 7).astype(np.float32)]),
    OpCase("array:shapes", _shapes, _floats(2, 3), ("Shape", "ShapeN", "Size", "Rank", "OnesLike", "ZerosLike"),
           feed_shapes=False),
    OpCase("array:one_hot", lambda i: tf.one_hot(i, 4, on_value=2.0, off_value=-1.0),
           lambda rng: [rng.randint(-1, 4, (2, 3)).astype(np.int32)], ("OneHot",)),
    OpCase("array:invert_permutation", lambda p: tf.invert_permutation(p),
           lambda rng: [rng.permutation(6).astype(np.int32)], ("InvertPermutation",),
           expected=lambda p: [np.argsort(p).astype(np.int32)]),
    OpCase("array:unique", _unique, lambda rng: [rng.randint(0, 4, (9,)).astype(np.int32)],
           ("Unique", "UniqueWithCounts")),
    OpCase("array:where", lambda a: tf.where(a > 0), _floats(3, 4), ("Where",),
           expected=lambda a: [np.argwhere(a > 0)]),
    OpCase("nn:in_top_k", _in_top_k, _floats(3, 5), ("InTopKV2", "InTopK")),
    OpCase("nn:fused_matmul", _fused_matmul,
           lambda rng: [rng.randn(3, 4).astype(np.float32), rng.randn(4, 2).astype(np.float32),
                        rng.randn(2).astype(np.float32)], ("_FusedMatMul",),
           expected=lambda a, b, c: [np.maximum(a @ b + c, 0)]),
    OpCase("nn:fused_conv2d", _fused_conv,
           lambda rng: [rng.randn(1, 4, 4, 2).astype(np.float32), rng.randn(3, 3, 2, 3).astype(np.float32),
                        rng.randn(3).astype(np.float32)], ("_FusedConv2D",)),
    OpCase("math:broadcast_gradient_args", _broadcast_gradient_args, ops=("BroadcastGradientArgs",),
           expected=lambda: [np.array([1], np.int32), np.array([0, 1], np.int32)]),
    OpCase("script:py_func", _python_functions, _floats(2, 2), ("PyFunc", "PyFuncStateless"),
           expected=lambda a: [a * 2, a * a]),
    OpCase("logging:print_assert_format", _print_and_assert, _floats(3), ("Assert", "PrintV2", "StringFormat", "NoOp")),
]
