"""Cast (white paper Table 1's element-wise ops) and TF1's cast helpers: tf.cast, to_float,
to_double, to_int32, to_int64, with TF's conversion rules (saturate_cast is in elementwise.py;
Cast's gradient in grad.py).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import _util
from tensorweave.ops._util import register_kernel as _kernel

__all__ = ["cast", "to_float", "to_double", "to_int32", "to_int64"]


Cast = define_op("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
                 attrs=["SrcT: type", "DstT: type", "Truncate: bool = false"],
                 shape_fn=_util.unchanged)


def _same_value(x: Any) -> Any:
    return x


def _cast_fn(src: _dtypes.DType, dst: _dtypes.DType, xp: Any) -> Callable:
    """x -> x as `dst` with TF's rules: complex loses its imaginary part (also for bool),
    anything -> bool is x != 0, floats -> integers truncate toward zero (NaN and out-of-range
    values wrap as the C cast does, which is also what NumPy does)."""
    np_dst = dst.as_numpy_dtype
    if src == _dtypes.string or dst == _dtypes.string:
        def unsupported(x: Any) -> Any:
            raise errors.UnimplementedError(None, None, f"Cast {src.name} to {dst.name} is not "
                                            "supported")
        return unsupported
    if src == dst:
        return _same_value  # TF's Cast forwards its input then; aliasing is safe (buffer_forwarding.py)
    real = xp.real if src.is_complex and not dst.is_complex else None
    if dst == _dtypes.bool:
        if real is not None:
            return lambda x: real(x) != 0
        return lambda x: x != 0
    if real is not None:
        return lambda x: real(x).astype(np_dst)
    return lambda x: x.astype(np_dst)


@_kernel(Cast)
def _cast_kernel(ctx: KernelContext) -> Callable:
    return _cast_fn(ctx.attr("SrcT"), ctx.attr("DstT"), ctx.xp)


@Cast.constant_value
def _cast_constant_value(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    if value is None:
        return None
    with np.errstate(all="ignore"):
        return np.array(_cast_fn(t.op._get_attr("SrcT"), t.op._get_attr("DstT"), np)(np.asarray(value)))



def cast(x: Any, dtype: Any, name: Optional[str] = None) -> Any:
    """Casts `x` to `dtype` (op Cast); returns `x` itself if it already has that dtype."""
    base = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == base:
            return x
        return apply_op(Cast, name=scope, x=x, DstT=base)


def to_float(x: Any, name: str = "ToFloat") -> Any:
    """Casts to float32 (deprecated TF1 helper)."""
    return cast(x, _dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Any:
    """Casts to float64 (deprecated TF1 helper)."""
    return cast(x, _dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Any:
    """Casts to int32 (deprecated TF1 helper)."""
    return cast(x, _dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Any:
    """Casts to int64 (deprecated TF1 helper)."""
    return cast(x, _dtypes.int64, name=name)
