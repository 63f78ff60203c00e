"""`tf.Assert`, `tf.Print` and `tf.print`: checks and printing as graph nodes."""
from __future__ import annotations

import collections
import os
import pprint
import random
import sys
import time
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import is_tensor
from tensorweave.ops import _util
from tensorweave.ops._util import shape_error
from tensorweave.framework import nest
from tensorweave.ops.strings.string_ops import string_format

__all__ = ["Assert", "Print", "print"]

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
def _assert_kernel(ctx: Any) -> Any:
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
def _print_kernel(ctx: Any) -> Any:
    message, first_n, summarize = ctx.attr("message"), ctx.attr("first_n"), ctx.attr("summarize")
    printed = [0]

    def run(x: Any, *data: Any) -> Any:
        if first_n < 0 or printed[0] < first_n:
            printed[0] += 1
            # TF's layout: the message, then each datum summarized in brackets, no separator
            sys.stderr.write(message + "".join(_datum_text(d, summarize) for d in data) + "\n")
        return x

    return run


@PrintOp.gradient
def _print_grad(op: Any, grad: Any) -> list[Any]:
    return [grad] + [None] * (len(op.inputs) - 1)


def Print(input_: Any, data: Sequence[Any], message: Optional[str] = None, first_n: Optional[int] = None,  # noqa: N802
          summarize: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Identity on input_ that prints `data` (to stderr) when it runs."""
    return apply_op(PrintOp, name=name, input=input_, data=list(data), message=message, first_n=first_n,
                    summarize=summarize)


# ---------------------------------------------------------------------------------------------
# PrintV2 and tf.print
# ---------------------------------------------------------------------------------------------
def _print_v2_shape(op: Any) -> list:
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
def _print_v2_kernel(ctx: Any) -> Any:
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


def _output_stream_name(output_stream: Any) -> str:
    """PrintV2's output_stream attr for tf.print's argument: the current sys.stdout/sys.stderr
    objects, a logging level (logging.INFO, WARNING/WARN, ERROR) or 'file://<path>'."""
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    known = {sys.stdout: "stdout", sys.stderr: "stderr", 20: "log(info)", 30: "log(warning)",
             40: "log(error)"}
    name = known.get(output_stream) if not isinstance(output_stream, bool) else None
    if name is None:
        raise ValueError(f"Unsupported output stream, logging level, or file.{output_stream}. Supported "
                         "streams are sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, "
                         "tf.logging.error. File needs to be in the form of 'file://<filepath>'.")
    return name


def _fresh_placeholder(text: str) -> str:
    """'{}', lengthened with seeded random digits until it does not occur in `text`."""
    placeholder, rng = "{}", random.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _print_template(inputs: Sequence[Any], sep: str) -> tuple[str, str, list]:
    """(template, placeholder, tensors): Python values written out with pprint, each tensor (and
    each part of a SparseTensor) a placeholder, the inputs joined with `sep`."""
    sorted_dicts = [collections.OrderedDict(sorted(x.items())) if isinstance(x, collections.OrderedDict)
                    else x for x in inputs]
    tensor_free = [nest.pack_sequence_as(x, ["" if is_tensor(leaf) else leaf for leaf in nest.flatten(x)])
                   for x in sorted_dicts]
    placeholder = _fresh_placeholder(" ".join(pprint.pformat(x) for x in tensor_free))
    templates, tensors = [], []
    for x in inputs:
        pieces = []
        for leaf in nest.flatten(x):
            if isinstance(leaf, SparseTensor):
                tensors += [leaf.indices, leaf.values, leaf.dense_shape]
                pieces.append(f"SparseTensor(indices={placeholder}, values={placeholder}, shape={placeholder})")
            elif is_tensor(leaf):
                tensors.append(leaf)
                pieces.append(placeholder)
            else:
                pieces.append(leaf)
        templates.append(x if isinstance(x, str) else pprint.pformat(nest.pack_sequence_as(x, pieces)))
    # pformat quoted the bare placeholders; a tensor's text goes in unquoted
    return sep.join(templates).replace(f"'{placeholder}'", placeholder), placeholder, tensors


def print(*inputs: Any, **kwargs: Any) -> Any:  # noqa: A001 (TF's name)
    """tf.print: an op that prints `inputs` when it runs: tensors as tf.strings.format shows
    them (first and last `summarize` entries per dimension), Python values and structures of
    tensors as pprint writes them, separated by `sep` and followed by `end`. Keyword arguments:
    output_stream (sys.stderr by default; sys.stdout, logging.INFO/WARNING/ERROR or
    'file://<path>'), summarize=3, sep=' ', end=os.linesep, name. In graph mode run the
    returned op, or use it as a control dependency."""
    output_stream = kwargs.pop("output_stream", sys.stderr)
    name, summarize = kwargs.pop("name", None), kwargs.pop("summarize", 3)
    sep, end = kwargs.pop("sep", " "), kwargs.pop("end", os.linesep)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream_name = _output_stream_name(output_stream)
    single = inputs[0] if len(inputs) == 1 else None
    if (is_tensor(single) and not isinstance(single, SparseTensor) and single.shape.ndims == 0
            and single.dtype.base_dtype.name == "string"):
        message = single  # a lone scalar string prints as it is, unquoted
    else:
        template, placeholder, tensors = _print_template(inputs, sep)
        message = string_format(template, tensors, placeholder=placeholder, summarize=summarize,
                                name=name + "_format" if name else None)
    return apply_op(PrintV2, name=name, input=message, output_stream=stream_name, end=end)
