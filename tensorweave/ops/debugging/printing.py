"""`tf.print`: formats its inputs with StringFormat (Python values and structures written out as
pprint writes them, tensors as tf.strings.format shows them) and prints the text with PrintV2."""
from __future__ import annotations

import collections
import os
import pprint
import random
import sys
from typing import Any, Sequence

from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import is_tensor
from tensorweave.framework import nest
from tensorweave.ops.debugging.logging_ops import PrintV2
from tensorweave.ops.strings.string_ops import string_format

__all__ = ["print"]


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
