"""Run-time checks: `tf.assert_equal`, `assert_less`, `assert_positive`, `assert_rank`, ...
(built on the Assert op, and failing already at graph construction when both sides are
constants and the check fails, as TF1 does), `assert_type`, and `tf.verify_tensor_all_finite` and
`tf.add_check_numerics_ops` (on the CheckNumerics op of debugging/numerics.py)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import control_dependencies, get_default_graph, name_scope, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.shaping import identity, rank as rank_of, shape as shape_of
from tensorweave.ops.control_flow.grouping import group, no_op
from tensorweave.ops.debugging.logging_ops import Assert
from tensorweave.ops.debugging.numerics import check_numerics
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import equal, greater, greater_equal, less, less_equal, not_equal
from tensorweave.ops.math.reduction import reduce_all

__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_rank", "assert_type", "check_numerics", "verify_tensor_all_finite",
           "add_check_numerics_ops"]


def _prefix(message: Optional[str]) -> str:
    return f"{message}.  " if message else ""


def _static_value(t: Tensor) -> Any:
    return tensor_util.constant_value(t)


def _raise_static(data: Sequence[Any]) -> None:
    """The build-time failure: the data items, constant tensors shown by value, one per line."""
    lines = []
    for d in data:
        if isinstance(d, Tensor):
            value = _static_value(d)
            lines.append(str(value) if value is not None else d.name)
        else:
            lines.append(d.decode() if isinstance(d, bytes) else str(d))
    raise errors.InvalidArgumentError(None, None, "\n".join(lines))


def _binary_assert(symbol: str, default_name: str, test_op: Callable, np_test: Callable, x: Any, y: Any,
                   data: Any, summarize: Optional[int], message: Optional[str], name: Optional[str]) -> Any:
    with name_scope(name, default_name, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype_hint=x.dtype.base_dtype)
        if data is None:
            data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        condition = reduce_all(test_op(x, y))
        x_static, y_static = _static_value(x), _static_value(y)
        if x_static is not None and y_static is not None and not np.all(np_test(x_static, y_static)):
            _raise_static(data)
        return Assert(condition, data, summarize=summarize)


def assert_equal(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                 name: Optional[str] = None) -> Any:
    """An op that fails (InvalidArgumentError) unless x == y element-wise."""
    return _binary_assert("==", "assert_equal", equal, np.equal, x, y, data, summarize, message, name)


def assert_none_equal(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None,
                      message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """An op that fails unless x != y element-wise."""
    return _binary_assert("!=", "assert_none_equal", not_equal, np.not_equal, x, y, data, summarize,
                          message, name)


def assert_less(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                name: Optional[str] = None) -> Any:
    """An op that fails unless x < y element-wise."""
    return _binary_assert("<", "assert_less", less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None,
                      message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """An op that fails unless x <= y element-wise."""
    return _binary_assert("<=", "assert_less_equal", less_equal, np.less_equal, x, y, data, summarize,
                          message, name)


def assert_greater(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None,
                   message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """An op that fails unless x > y element-wise."""
    return _binary_assert(">", "assert_greater", greater, np.greater, x, y, data, summarize, message,
                          name)


def assert_greater_equal(x: Any, y: Any, data: Any = None, summarize: Optional[int] = None,
                         message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """An op that fails unless x >= y element-wise."""
    return _binary_assert(">=", "assert_greater_equal", greater_equal, np.greater_equal, x, y, data,
                          summarize, message, name)


def _sign_assert(symbol: str, default_name: str, check: Callable, zero_first: bool, x: Any, data: Any,
                 summarize: Optional[int], message: Optional[str], name: Optional[str]) -> Any:
    with name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [_prefix(message), f"Condition x {symbol} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype.base_dtype)
        return check(zero, x, data=data, summarize=summarize) if zero_first else check(x, zero, data=data,
                                                                                      summarize=summarize)


def assert_positive(x: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                    name: Optional[str] = None) -> Any:
    """An op that fails unless x > 0 element-wise."""
    return _sign_assert(">", "assert_positive", assert_less, True, x, data, summarize, message, name)


def assert_negative(x: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                    name: Optional[str] = None) -> Any:
    """An op that fails unless x < 0 element-wise."""
    return _sign_assert("<", "assert_negative", assert_less, False, x, data, summarize, message, name)


def assert_non_negative(x: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                        name: Optional[str] = None) -> Any:
    """An op that fails unless x >= 0 element-wise."""
    return _sign_assert(">=", "assert_non_negative", assert_less_equal, True, x, data, summarize, message, name)


def assert_non_positive(x: Any, data: Any = None, summarize: Optional[int] = None, message: Optional[str] = None,
                        name: Optional[str] = None) -> Any:
    """An op that fails unless x <= 0 element-wise."""
    return _sign_assert("<=", "assert_non_positive", assert_less_equal, False, x, data, summarize, message, name)


def _shape_text(t: Tensor) -> str:
    return "<unknown>" if t.shape.ndims is None else repr(tuple(t.shape.as_list()))


def assert_rank(x: Any, rank: Any, data: Any = None, summarize: Optional[int] = None,
                message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Checks that `x` has rank `rank`: a ValueError at graph construction when both are known,
    otherwise an op that fails at run time."""
    with name_scope(name, "assert_rank", [x, rank]):
        x = convert_to_tensor(x, name="x")
        rank_t = convert_to_tensor(rank, name="rank")
        if rank_t.shape.ndims not in (None, 0):
            raise ValueError(f"Rank must be a scalar. Received rank: {rank}")
        static_rank = _static_value(rank_t)
        if static_rank is not None and x.shape.ndims is not None:
            if int(static_rank) != x.shape.ndims:
                raise ValueError(f"{_prefix(message)}Tensor {x.name} must have rank {int(static_rank)}.  "
                                 f"Received rank {x.shape.ndims}, shape {_shape_text(x)}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [_prefix(message), f"Tensor {x.name} must have rank", rank_t, "Received shape: ",
                    shape_of(x)]
        condition = equal(rank_of(x), cast(rank_t, _dtypes.int32))
        return Assert(condition, data, summarize=summarize)


def assert_type(tensor: Any, tf_type: Any, message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """A TypeError unless `tensor`'s dtype is `tf_type`; else a no-op."""
    tf_type = _dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype.base_dtype != tf_type.base_dtype:
            raise TypeError(f"{_prefix(message)}{tensor.name} must be of type {tf_type!r}; got {tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def verify_tensor_all_finite(t: Any = None, msg: Optional[str] = None, name: Optional[str] = None,
                             x: Any = None, message: Optional[str] = None) -> Any:
    """`t`, after a check that it holds neither NaN nor Inf (failing with `msg`)."""
    t = x if t is None else t
    msg = message if msg is None else msg
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="x")
        with control_dependencies([check_numerics(t, message=msg)]):
            return identity(t, name="control_dependency")


_CHECKED_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)  # as TF: not bfloat16, not refs


def add_check_numerics_ops() -> Any:
    """A CheckNumerics op on every half, float and double output of every op in the default graph,
    and a `group` op depending on them. The checks are chained by control dependencies in graph
    order, so an op's inputs are checked before its outputs (the first NaN or Inf is the one
    reported). Raises ValueError if such an op is inside `tf.cond` or `tf.while_loop`, as TF."""
    checks: list[Any] = []
    # get_operations() lists ops in creation order, so producers come before their consumers.
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype not in _CHECKED_DTYPES:
                continue
            if op._control_flow_context is not None:
                raise ValueError("`tf.add_check_numerics_ops() is not compatible with TensorFlow "
                                 "control flow operations such as `tf.cond()` or `tf.while_loop()`.")
            with control_dependencies(checks):
                checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return group(*checks)
