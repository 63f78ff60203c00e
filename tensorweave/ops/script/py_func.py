"""`tf.py_func`: a Python function as a graph node (TF1's PyFunc / PyFuncStateless)."""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util

__all__ = ["py_func"]

# Functions are referenced from the graph by token, as TF does, so graphs stay serializable.
_FUNCS: dict[str, Callable[..., Any]] = {}
_tokens = itertools.count()
_lock = threading.Lock()


def _register(fn: Callable[..., Any]) -> str:
    with _lock:
        token = f"pyfunc_{next(_tokens)}"
        _FUNCS[token] = fn
    return token


def _py_func_kernel(ctx: KernelContext) -> Any:
    token = ctx.attr("token")
    out_types = [np.dtype(t.as_numpy_dtype) for t in ctx.attr("Tout")]
    op = ctx.op

    def compute(*inputs: Any) -> Any:
        fn = _FUNCS.get(token)
        if fn is None:
            raise errors.UnknownError(None, op, f"callback {token} is not found")
        result = fn(*inputs)
        if not out_types:
            return ()
        values = [result] if len(out_types) == 1 and not isinstance(result, (list, tuple)) else list(result)
        if len(values) != len(out_types):
            raise errors.InvalidArgumentError(
                None, op, f"py_func returned {len(values)} values, {len(out_types)} expected")
        converted = [np.asarray(v, dtype=t) for v, t in zip(values, out_types)]
        return converted[0] if len(converted) == 1 else converted

    return compute


_SIG = dict(inputs=["input: Tin"], outputs=["output: Tout"],
            attrs=["token: string", "Tin: list(type)", "Tout: list(type)"], shape_fn=_util.unknown)
PyFunc = define_op("PyFunc", is_stateful=True, expensive=True, **_SIG)  # Python code: run it off-thread
PyFuncStateless = define_op("PyFuncStateless", expensive=True, **_SIG)
for _op in (PyFunc, PyFuncStateless):
    _op.kernel()(_py_func_kernel)
    _op.not_differentiable()


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any, stateful: bool = True,  # noqa: N803
            name: Optional[str] = None) -> Any:
    """Wraps a Python function taking and returning NumPy arrays as a graph op."""
    single = not isinstance(Tout, (list, tuple))
    tout = [_dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    result = apply_op(PyFunc if stateful else PyFuncStateless, name=name, input=list(inp),
                      token=_register(func), Tout=tout)
    if single:
        return result[0] if isinstance(result, list) else result
    return result
