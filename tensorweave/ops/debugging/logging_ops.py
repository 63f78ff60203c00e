"""`tf.Assert` and `tf.Print`, and the PrintV2 op under `tf.print` (debugging/printing.py):
checks and printing as graph nodes."""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.ops._util import shape_error

__all__ = ["Assert", "Print"]

AssertOp = define_op("Assert", inputs=["condition: bool", "data: T"], attrs=["T: list(type)", "summarize: int = 3"],
                     shape_fn=_util.no_outputs, is_stateful=True)
AssertOp.not_differentiable()


def _element_text(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if f != f or f in (float("inf"), float("-inf")):
            return {True: "nan"}.get(f != f, "inf" if f > 0 else "-inf")
        return np.format_float_positional(v, trim="-") if f == 0 or 1e-4 <= abs(f) < 1e16 else \
            np.format_float_scientific(v, trim="-", exp_digits=2)
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return str(v)


def summarize_value(value: Any, limit: int) -> str:
    """TF's summary of a tensor in messages: nested brackets, at most `limit` elements, '...'
    where elements were left out (e.g. [[1 2][-3...]...])."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return _element_text(arr.item() if arr.dtype != object else arr.reshape(-1)[0])
    flat, shape, count, out = arr.reshape(-1), arr.shape, [0], []

    def one_dim(dim: int) -> None:
        if count[0] >= limit:
            return
        if dim == len(shape) - 1:
            for i in range(shape[dim]):
                if count[0] >= limit:
                    if dim != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(_element_text(flat[count[0]]))
                count[0] += 1
            return
        for _ in range(shape[dim]):
            opened = count[0] < limit
            if opened:
                out.append("[")
            one_dim(dim + 1)
            if count[0] < limit or opened:
                out.append("]")

    one_dim(0)
    return "[" + "".join(out) + ("..." if flat.size > limit else "") + "]"


@AssertOp.kernel()
def _assert_kernel(ctx: KernelContext) -> Any:
    summarize, node = ctx.attr("summarize"), ctx.op

    def check(condition: Any, *data: Any) -> None:
        if not bool(np.all(condition)):
            shown = " ".join(_datum_text(d, summarize) for d in data)
            raise errors.InvalidArgumentError(None, node, f"assertion failed: {shown}")

    return check


def _datum_text(d: Any, summarize: int) -> str:
    arr = np.asarray(d)
    if arr.ndim == 0 and arr.dtype == object or isinstance(d, bytes):
        return "[" + _element_text(arr.reshape(-1)[0]) + "]"  # a string datum prints as itself
    text = summarize_value(arr, summarize)
    return text if arr.ndim else "[" + text + "]"


def Assert(condition: Any, data: Sequence[Any], summarize: Optional[int] = None,  # noqa: N802
           name: Optional[str] = None) -> Any:
    """An op that raises InvalidArgumentError with `data` when `condition` is false."""
    return apply_op(AssertOp, name=name, condition=condition, data=list(data), summarize=summarize)


PrintOp = define_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
                    attrs=["T: type", "U: list(type)", "message: string = ''", "first_n: int = -1",
                           "summarize: int = 3"], shape_fn=_util.unchanged, is_stateful=True,
                    forwards_input=True)


@PrintOp.kernel()
def _print_kernel(ctx: KernelContext) -> Any:
    message, first_n, summarize = ctx.attr("message"), ctx.attr("first_n"), ctx.attr("summarize")
    printed = [0]

    def run(x: Any, *data: Any) -> Any:
        if first_n < 0 or printed[0] < first_n:
            printed[0] += 1
            # TF's layout: the message, then each datum summarized in brackets, no separator
            sys.stderr.write(message + "".join(_datum_text(d, summarize) for d in data) + "\n")
        return x

    return run


def Print(input_: Any, data: Sequence[Any], message: Optional[str] = None, first_n: Optional[int] = None,  # noqa: N802
          summarize: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Identity on input_ that prints `data` (to stderr) when it runs."""
    return apply_op(PrintOp, name=name, input=input_, data=list(data), message=message, first_n=first_n,
                    summarize=summarize)


# ---------------------------------------------------------------------------------------------
# PrintV2 and tf.print
# ---------------------------------------------------------------------------------------------
def _print_v2_shape(op: Operation) -> list:
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims != 0:
        raise shape_error(op, f"input must be a scalar, but has rank: {shape.ndims}")
    return []


PrintV2 = define_op("PrintV2", inputs=["input: string"], attrs=["output_stream: string = 'stderr'",
                                                             "end: string = '\\n'"],
                    shape_fn=_print_v2_shape, is_stateful=True)
PrintV2.not_differentiable()

_LOG_STREAMS = {"log(info)": "I", "log(warning)": "W", "log(error)": "E"}


def _log_line(severity: str, text: str) -> str:
    """A glog-style line, as TF's C++ logging writes it to stderr."""
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    return f"{severity}{stamp} {os.getpid()} logging_ops.py] {text}\n"


@PrintV2.kernel()
def _print_v2_kernel(ctx: KernelContext) -> Any:
    stream, end = ctx.attr("output_stream"), ctx.attr("end")
    if stream not in ("stdout", "stderr", *_LOG_STREAMS) and not stream.startswith("file://"):
        raise errors.InvalidArgumentError(None, ctx.op, f"Unknown output stream: {stream}, Valid streams are: "
                                                        "stdout stderr log(info) log(warning) log(error)")

    def run(message: Any) -> None:
        text = np.asarray(message, dtype=object).item()
        text = (text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)) + end
        if stream.startswith("file://"):
            with open(stream[len("file://"):], "a", encoding="utf-8") as f:  # TF appends
                f.write(text)
            return
        out = sys.stdout if stream == "stdout" else sys.stderr  # looked up now: redirections apply
        out.write(_log_line(_LOG_STREAMS[stream], text) if stream in _LOG_STREAMS else text)
        out.flush()

    return run
