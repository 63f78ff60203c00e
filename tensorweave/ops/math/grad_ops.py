"""TF's fused gradient ops of unary functions: SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad and
ReciprocalGrad(y, dy) = dy * conj(f'(y)), with f' written from the forward output y. Each is one
kernel with one temporary, computed in the same order as the composite graph it replaces (the
same float results): an LSTM cell's backward pass has five of them per time step. The gradients
of Sigmoid, Tanh, Sqrt, Rsqrt and Reciprocal (grad.py) are built from them, and so are these
ops' own gradients (second derivatives)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import OpDef, define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.ops._util import register_kernel as _kernel

__all__ = ["sigmoid_grad", "tanh_grad", "sqrt_grad", "rsqrt_grad", "reciprocal_grad"]


def _fused_grad_op(name: str) -> OpDef:
    return define_op(name, inputs=["y: T", "dy: T"], outputs=["z: T"],
                     attrs=["T: {float16, float32, float64, complex64, complex128}"],
                     shape_fn=_util.merge_all_inputs)


SigmoidGrad = _fused_grad_op("SigmoidGrad")
TanhGrad = _fused_grad_op("TanhGrad")
SqrtGrad = _fused_grad_op("SqrtGrad")
RsqrtGrad = _fused_grad_op("RsqrtGrad")
ReciprocalGrad = _fused_grad_op("ReciprocalGrad")


def _sigmoid_derivative(y: Any) -> Any:   # y * (1 - y)
    t = 1 - y
    return np.multiply(y, t, out=t)


def _tanh_derivative(y: Any) -> Any:      # 1 - y * y
    t = y * y
    return np.subtract(1, t, out=t)


def _sqrt_derivative(y: Any) -> Any:      # 0.5 / y
    return 0.5 / y


def _rsqrt_derivative(y: Any) -> Any:     # -0.5 * y^3
    t = y * y
    t *= y
    return np.multiply(-0.5, t, out=t)


def _reciprocal_derivative(y: Any) -> Any:  # -y^2
    t = y * y
    return np.negative(t, out=t)


def _fused_kernel(derivative: Callable[[Any], Any]) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        conj = np.conjugate if ctx.attr("T").is_complex else None

        def compute(y: Any, dy: Any) -> Any:
            y = np.asarray(y)
            if y.ndim == 0:  # NumPy returns scalars, not arrays, for 0-d operands: no out=
                t = derivative(y.reshape(1)).reshape(())
                return np.multiply(dy, t.conj() if conj is not None else t)
            t = derivative(y)
            if conj is not None:
                conj(t, out=t)
            if t.shape != np.shape(dy):  # unknown static shapes: let NumPy broadcast or raise
                return np.multiply(dy, t)
            return np.multiply(dy, t, out=t)

        return compute

    return build


for _op, _derivative in ((SigmoidGrad, _sigmoid_derivative), (TanhGrad, _tanh_derivative),
                         (SqrtGrad, _sqrt_derivative), (RsqrtGrad, _rsqrt_derivative),
                         (ReciprocalGrad, _reciprocal_derivative)):
    _kernel(_op)(_fused_kernel(_derivative))


def sigmoid_grad(y: Any, dy: Any, name: Optional[str] = None) -> Any:
    """dy * y * (1 - y): the gradient of y = sigmoid(x) from y (y conjugated for complex y)."""
    return apply_op(SigmoidGrad, name=name, y=y, dy=dy)


def tanh_grad(y: Any, dy: Any, name: Optional[str] = None) -> Any:
    """dy * (1 - y * y): the gradient of y = tanh(x) from y (y conjugated for complex y)."""
    return apply_op(TanhGrad, name=name, y=y, dy=dy)


def sqrt_grad(y: Any, dy: Any, name: Optional[str] = None) -> Any:
    """dy * 0.5 / y: the gradient of y = sqrt(x) from y (y conjugated for complex y)."""
    return apply_op(SqrtGrad, name=name, y=y, dy=dy)


def rsqrt_grad(y: Any, dy: Any, name: Optional[str] = None) -> Any:
    """dy * -0.5 * y^3: the gradient of y = rsqrt(x) from y (y conjugated for complex y)."""
    return apply_op(RsqrtGrad, name=name, y=y, dy=dy)


def reciprocal_grad(y: Any, dy: Any, name: Optional[str] = None) -> Any:
    """dy * -y^2: the gradient of y = 1 / x from y (y conjugated for complex y)."""
    return apply_op(ReciprocalGrad, name=name, y=y, dy=dy)
