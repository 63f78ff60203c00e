"""The eager fast path (eager/call_plans.py, eager/operators.py): a call's second run goes
through its plan and gives exactly the first (general path) run's result, dtype and errors;
Python scalars convert by TF's rules; tapes see planned ops; EagerTensor operators and simple
indexing match NumPy; eager name scopes name without uniquifying, as TF's."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.eager import context
from tensorweave.eager.tensor import EagerTensor
from tensorweave.framework import errors
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.math.elementwise import Sub
from tests.eager.test_dispatch import BINARY_CASES, UNARY_CASES, _rand
from tests.ops.math.test_elementwise import nonzero


def _plans():
    return tf.get_default_graph()._plans


def _twice(fn):
    """fn() run by the general path, then by its plan (asserting one was made and used)."""
    first = fn()
    n = len(_plans())
    second = fn()
    assert len(_plans()) == n
    return first, second


def _same(first, second):
    assert type(second) is EagerTensor
    assert second.dtype == first.dtype
    np.testing.assert_array_equal(second.numpy(), first.numpy())


@pytest.mark.parametrize("fn,ref,name,dtype", BINARY_CASES,
                         ids=[f"{c[2]}-{np.dtype(c[3]).name}" for c in BINARY_CASES])
def test_planned_binary_ops_equal_the_general_path(fn, ref, name, dtype):
    a, b = _rand((2, 3), dtype), nonzero(_rand((3,), dtype))
    with context.eager_mode():
        x, y = tf.constant(a), tf.constant(b)
        _same(*_twice(lambda: fn(x, y)))


@pytest.mark.parametrize("fn,ref,name,dtype", UNARY_CASES,
                         ids=[f"{c[2]}-{np.dtype(c[3]).name}" for c in UNARY_CASES])
def test_planned_unary_ops_equal_the_general_path(fn, ref, name, dtype):
    a = _rand((2, 3), dtype)
    with context.eager_mode():
        x = tf.constant(a)
        _same(*_twice(lambda: fn(x)))


def test_a_plan_is_made_once_per_op_names_dtypes_shapes_and_attrs():
    with context.eager_mode():
        a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
        before = len(_plans())
        for _ in range(3):
            tf.add(a, b)
        assert len(_plans()) == before + 1
        tf.add(tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 2.0, 3.0]))  # another shape
        tf.add(tf.constant([1, 2]), tf.constant([3, 4]))  # another dtype
        apply_op(Sub, y=b, x=a)  # the arguments by name in the op's order and in another
        apply_op(Sub, x=a, y=b)
        assert len(_plans()) == before + 5
        m = tf.ones([2, 2])
        np.testing.assert_array_equal(tf.matmul(m, m, transpose_a=True).numpy(), [[2, 2], [2, 2]])
        tf.matmul(m, m)
        tf.matmul(m, m)
        assert len(_plans()) == before + 7
        for _ in range(2):
            np.testing.assert_array_equal(apply_op(Sub, y=b, x=a).numpy(), [-2, -2])
            np.testing.assert_array_equal(apply_op(Sub, x=a, y=b).numpy(), [-2, -2])


def test_python_scalars_convert_by_tf_rules_on_the_plan():
    with context.eager_mode():
        f32 = tf.constant([1.0, 2.0])
        i32 = tf.constant([1, 2])
        i64 = tf.constant([1, 2], dtype=tf.int64)
        for _ in range(2):
            r = tf.multiply(f32, 1.01)
            assert r.dtype == tf.float32
            np.testing.assert_array_equal(r.numpy(), np.array([1, 2], np.float32) * np.float32(1.01))
            assert tf.add(1.5, f32).dtype == tf.float32
            assert tf.add(f32, 2).dtype == tf.float32
            r = tf.add(i32, 3)
            assert r.dtype == tf.int32
            np.testing.assert_array_equal(r.numpy(), [4, 5])
            np.testing.assert_array_equal(tf.add(i64, 2 ** 40).numpy(), [2 ** 40 + 1, 2 ** 40 + 2])
            assert tf.add(i64, 2 ** 40).dtype == tf.int64
            assert tf.logical_and(tf.constant([True, False]), True).dtype == tf.bool
            assert tf.add(2, 3).dtype == tf.int32
            assert tf.add(2.0, 3.0).dtype == tf.float32
        # a float does not convert to an integer tensor's dtype, on every call
        for _ in range(2):
            with pytest.raises(TypeError, match="int32"):
                tf.add(i32, 1.5)
        # an int out of int32's range for an int32 tensor: the general path's error, every call
        messages = set()
        for _ in range(2):
            with pytest.raises((TypeError, ValueError)) as info:
                tf.add(i32, 2 ** 40)
            messages.add(str(info.value))
        assert len(messages) == 1


def test_errors_of_planned_calls_are_tf_error_classes():
    with context.eager_mode():
        a2, b2, c3 = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]), tf.constant([1.0, 2.0, 3.0])
        tf.add(a2, b2)
        tf.add(a2, b2)
        for _ in range(2):
            with pytest.raises(errors.InvalidArgumentError, match=r"Dimensions must be equal.*\[Op:AddV2\]"):
                tf.add(a2, c3)
        x, zero = tf.constant([4, 6]), tf.constant([2, 0])
        tf.floordiv(x, tf.constant([1, 2]))  # planned
        with pytest.raises(errors.InvalidArgumentError, match=r"Integer division by zero \[Op:FloorDiv\]"):
            tf.floordiv(x, zero)
        with pytest.raises(TypeError, match="does not match"):
            tf.add(a2, tf.constant([1, 2]))
        with pytest.raises(TypeError):
            tf.add(tf.constant([True]), tf.constant([True]))


def test_tapes_see_planned_ops_and_converted_scalars():
    with context.eager_mode():
        x = tf.constant([1.0, 2.0])
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        loss_fn = lambda: tf.reduce_sum(tf.matmul(tf.reshape(x * 3.0 + 1.0, [1, 2]), w))  # noqa: E731
        loss_fn()  # plans made outside any tape
        for _ in range(2):
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                y = tf.multiply(x, x)
                loss = loss_fn()
            np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0])
            np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [3 * 3.0, 3 * 7.0])
            np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [[4.0, 4.0], [7.0, 7.0]])
            del tape


def test_planned_calls_read_variables_at_each_call():
    with context.eager_mode():
        v = tf.Variable([1.0, 2.0])
        one = tf.constant([1.0, 1.0])
        np.testing.assert_array_equal(tf.add(v, one).numpy(), [2.0, 3.0])
        v.assign([5.0, 6.0])
        np.testing.assert_array_equal(tf.add(v, one).numpy(), [6.0, 7.0])


def test_ops_of_planned_outputs_are_made_when_asked_for():
    with context.eager_mode():
        a = tf.constant([1.0, 2.0])
        for _ in range(2):
            t = tf.add(a, a)
            assert t.op is t.op
            assert t.op.type == "AddV2"
            assert t.op.get_attr("T") == tf.float32
            assert t.op.outputs[0] is t
        values, indices = tf.nn.top_k(tf.constant([3.0, 1.0, 2.0]), 2)
        values, indices = tf.nn.top_k(tf.constant([3.0, 1.0, 2.0]), 2)
        assert values.op is indices.op and values.op.type == "TopKV2"
        np.testing.assert_array_equal(indices.numpy(), [0, 2])


def test_eager_tensor_operators_match_numpy_and_dtypes():
    a_np, b_np = np.array([1.5, -2.0, 3.0], np.float32), np.array([2.0, 4.0, -1.0], np.float32)
    i_np = np.array([3, -4, 5], np.int32)
    with context.eager_mode():
        a, b, i = tf.constant(a_np), tf.constant(b_np), tf.constant(i_np)
        for _ in range(2):
            cases = [(a + b, a_np + b_np), (a - b, a_np - b_np), (a * b, a_np * b_np), (a / b, a_np / b_np),
                     (a + 1, a_np + 1), (1 + a, 1 + a_np), (2.5 - a, np.float32(2.5) - a_np),
                     (a * 1.01, a_np * np.float32(1.01)), (a / 2, a_np / 2), (3.0 / a, np.float32(3) / a_np),
                     (-a, -a_np), (a < b, a_np < b_np), (a <= 1.5, a_np <= 1.5), (a > 0, a_np > 0),
                     (a >= b, a_np >= b_np), (i + 2, i_np + 2), (i * i, i_np * i_np), (-i, -i_np)]
            for got, want in cases:
                assert got.numpy().dtype == want.dtype, (got, want)
                np.testing.assert_array_equal(got.numpy(), want)
            # integer true division casts to float64, as tf.truediv
            r = i / 2
            assert r.dtype == tf.float64
            np.testing.assert_array_equal(r.numpy(), i_np / 2)
            s = tf.constant(["a", "b"]) + tf.constant(["c", "d"])
            assert list(s.numpy()) == [b"ac", b"bd"]
            np.testing.assert_array_equal((a + a_np).numpy(), a_np + a_np)  # NumPy operand: Tensor's path
        with pytest.raises(TypeError):
            i + 1.5
        with pytest.raises(TypeError):
            a + i


@pytest.mark.parametrize("spec", [0, 1, -1, slice(None), slice(1, None), slice(None, 2), slice(None, None, -1),
                                  slice(0, 3, 2), slice(-2, None), slice(1, 1)])
def test_indexing_with_ints_and_slices_matches_numpy(spec):
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    with context.eager_mode():
        t = tf.constant(value)
        for _ in range(2):
            got = t[spec]
            assert got.shape == value[spec].shape
            np.testing.assert_array_equal(got.numpy(), value[spec])


def test_indexing_errors_and_other_indices():
    with context.eager_mode():
        t = tf.constant([[1, 2], [3, 4]])
        for _ in range(2):
            with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
                t[5]
        with pytest.raises(ValueError, match="mask cannot be scalar"):
            t[True]  # a bool is a mask, not an index
        np.testing.assert_array_equal(t[1, ::-1].numpy(), [4, 3])
        np.testing.assert_array_equal(t[..., 0].numpy(), [1, 3])


def test_eager_name_scopes_name_without_uniquifying_as_tf():
    with context.eager_mode():
        with tf.name_scope("block") as first:
            with tf.name_scope("inner") as inner:
                pass
        with tf.name_scope("block") as second:
            pass
        assert (first, inner, second) == ("block/", "block/inner/", "block/")
        with tf.name_scope("outer"):
            with tf.name_scope("abs/") as absolute:
                v = tf.Variable(1.0, name="v")
        assert absolute == "abs/" and v.name == "abs/v:0"
    # graph mode still makes them unique: test_eager_semantics.test_graph_mode_names_are_still_unique


def test_new_global_seed_drops_plans():
    with context.eager_mode():
        a = tf.constant([1.0])
        tf.add(a, a)
        assert len(_plans()) > 0
        tf.set_random_seed(3)
        assert len(_plans()) == 0


def test_eager_variable_operators_use_the_fast_path_and_tapes_see_them():
    with context.eager_mode():
        v = tf.Variable([1.0, 2.0])
        for _ in range(2):
            np.testing.assert_array_equal((v * 2).numpy(), [2.0, 4.0])
            np.testing.assert_array_equal((3 - v).numpy(), [2.0, 1.0])
            np.testing.assert_array_equal(v[1].numpy(), 2.0)
            with tf.GradientTape() as tape:
                y = v * v + v[0]
            np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2 * 1.0 + 2, 2 * 2.0])
