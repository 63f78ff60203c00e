"""_XlaRun: a JIT cluster run as one kernel (XLA's role). The `program` attr (JSON, described in
ops/kernels/jit/codegen.py) is the cluster's element-wise ops over its inputs, compiled by numba
into one ufunc, and optionally a reduction of that result (the unfused reduction kernel's own
NumPy call). `fused_ops` names the ops it replaced, as "<type> <name>" (step stats show them).

Made by grappler/jit/ on a step's graph whose gradients are already built: not differentiable.
"""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import broadcast_shapes, invalid, register_kernel, unimplemented
from tensorweave.ops.kernels.intra_op import ElementwiseSplitter
from tensorweave.ops.kernels.jit import compiler

__all__ = ["XlaRun", "program_of"]


def program_of(op: Any) -> dict[str, Any]:
    return json.loads(op.get_attr("program") if isinstance(op, Operation) else op.attr("program"))


def _xla_run_shape(op: Operation) -> list[TensorShape]:
    program = program_of(op)
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        shape = broadcast_shapes(shape, t.shape, op.name)
    reduce = program["reduce"]
    if reduce is None:
        return [shape]
    if shape.ndims is None:
        return [unknown_shape()]
    axes = set(reduce["axes"])
    dims = shape.as_list()
    if reduce["keep_dims"]:
        return [TensorShape([1 if i in axes else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in axes])]


XlaRun = define_op(
    "_XlaRun", inputs=["args: Tin"], outputs=["output: Tout"],
    attrs=["Tin: list(type) >= 1", "Tout: type", "program: string", "fused_ops: list(string) = []"],
    shape_fn=_xla_run_shape)
XlaRun.not_differentiable()


# From this many elements, inputs of the output's shape run through the compiled loop (no GIL,
# split over the device's threads when large); smaller or broadcast ones through the ufunc.
LOOP_MIN_ELEMENTS = 1 << 12


@register_kernel(XlaRun)
def _xla_run_kernel(ctx: KernelContext) -> Callable[..., Any]:
    if not compiler.numba_available():
        raise unimplemented(f"_XlaRun {ctx.op.name} needs numba (pip install tensorweave[jit])")
    program = program_of(ctx)
    ufunc, loop = compiler.compile_program(program)
    reduce = _reduction(program["reduce"], np.dtype(ctx.output_dtypes[0].as_numpy_dtype))
    split = ElementwiseSplitter.for_kernel(ctx) if reduce is None else None
    dtype = np.dtype(program["nodes"][program["result"]]["out"])
    ndarray, shape_of, empty, least = np.ndarray, np.shape, np.empty, LOOP_MIN_ELEMENTS

    def run_loop(out: Any, *blocks: Any) -> None:
        loop(out, *blocks)

    def elementwise(*args: Any) -> Any:
        first = args[0]
        if type(first) is ndarray and first.size >= least:
            shape = first.shape
            if all(type(a) is ndarray and a.shape == shape and a.flags.c_contiguous for a in args):
                out = empty(shape, dtype)
                flat = out.reshape(-1)
                operands = [a.reshape(-1) for a in args]
                if split is not None and split.wants_split(flat.size, flat.shape):
                    split.run(run_loop, flat.shape, dtype, *operands, out=flat)
                else:
                    loop(flat, *operands)
                return out
        try:
            return ufunc(*args)
        except ValueError:
            raise invalid("Incompatible shapes: " + " vs. ".join(str(list(shape_of(a))) for a in args)) from None

    if reduce is None:
        return elementwise
    return lambda *args: reduce(elementwise(*args))


def _reduction(spec: Optional[dict[str, Any]], dtype: Any) -> Optional[Callable[[Any], Any]]:
    """The unfused reduction kernels' NumPy calls (ops/math/reduction.py), float types only."""
    if spec is None:
        return None
    axes, keep, kind = tuple(spec["axes"]), bool(spec["keep_dims"]), spec["op"]
    if kind == "Sum":
        return lambda x: np.add.reduce(x, axis=axes, dtype=dtype, keepdims=keep)
    if kind == "Prod":
        return lambda x: np.multiply.reduce(x, axis=axes, dtype=dtype, keepdims=keep)
    if kind == "Max":
        return lambda x: np.maximum.reduce(x, axis=axes, keepdims=keep, initial=-np.inf)
    if kind == "Min":
        return lambda x: np.minimum.reduce(x, axis=axes, keepdims=keep, initial=np.inf)
    if kind == "Mean":
        def mean(x: Any) -> Any:
            count = math.prod(np.shape(x)[a] for a in axes)
            return np.true_divide(np.add.reduce(x, axis=axes, dtype=dtype, keepdims=keep), count, dtype=dtype)
        return mean
    raise unimplemented(f"_XlaRun cannot end with a {kind} reduction")

