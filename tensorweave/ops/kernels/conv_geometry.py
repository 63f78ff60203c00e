"""Window geometry shared by convolution and pooling: attribute checks, TensorFlow's output-size
rules for SAME / VALID / EXPLICIT padding with strides and dilations, and the static shapes the
shape functions infer (unknown dimensions allowed).

Conventions (TF's): for SAME the output is ceil(in / stride) and the padding needed is split with
the smaller half before; for VALID it is ceil((in - effective_window + 1) / stride); the effective
window of a dilated filter is (k - 1) * dilation + 1. The same rules run at graph construction
(shape functions raise ValueError naming the node) and in the kernels (InvalidArgumentError).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops._util import shape_error
from tensorweave.ops._util import invalid, unimplemented

__all__ = ["WindowAttrs", "window_attrs", "node_window_attrs", "window_output", "Geometry", "static_window_output",
           "spatial_dims", "to_data_format", "invalid", "unimplemented", "get_sequence", "convert_padding",
           "static_output_shape"]


@dataclasses.dataclass(frozen=True)
class WindowAttrs:
    """The window attributes of one node, in NHWC order whatever its data_format: `window` is
    (kh, kw) for pooling (None for convolutions, whose window is the filter), `strides` and
    `dilations` (sh, sw), `explicit` (top, bottom, left, right) for EXPLICIT padding, and the
    batch/depth entries kept so kernels can reject them as TF's kernels do."""

    op_type: str
    padding: str
    data_format: str
    strides: tuple[int, int]
    dilations: tuple[int, int]
    window: Optional[tuple[int, int]]
    explicit: tuple[int, int, int, int]
    outer_strides: tuple[int, int]       # (batch, depth) strides
    outer_dilations: tuple[int, int]     # (batch, depth) dilations
    outer_window: tuple[int, int]        # (batch, depth) window sizes (pooling)


def spatial_dims(data_format: str) -> tuple[int, int, int]:
    """(height, width, channel) axes of a 4-D tensor in `data_format`."""
    return (2, 3, 1) if data_format == "NCHW" else (1, 2, 3)


def to_data_format(nhwc: Sequence[Any], data_format: str) -> list[Any]:
    """An NHWC-ordered 4-list reordered for `data_format`."""
    n, h, w, c = nhwc
    return [n, c, h, w] if data_format == "NCHW" else [n, h, w, c]


_NONPOSITIVE = {"stride": "Stride must be > 0, but got {v}",
                "dilation": "Dilation must be > 0, but got {v}",
                "ksize": "Sliding window ksize for dimension {i} was zero."}


def _four(values: Sequence[int], what: str, attr: str, data_format: str, op_type: str,
          fail: Callable[[str], Exception]) -> tuple[int, int, int, int]:
    """A 4-list attr reordered to (batch, h, w, depth); all entries must be positive."""
    values = [int(v) for v in values]
    if len(values) != 4:
        raise fail(f"{op_type} on data format {data_format} requires the {what} attribute to contain "
                   f"4 values, but got: {len(values)}")
    for i, v in enumerate(values):
        if v <= 0:
            raise fail(_NONPOSITIVE[what].format(v=v, i=i))
    h_axis, w_axis, c_axis = spatial_dims(data_format)
    return values[0], values[h_axis], values[w_axis], values[c_axis]


def window_attrs(op_type: str, data_format: str, padding: str, strides: Sequence[int],
                 fail: Callable[[str], Exception], dilations: Sequence[int] = (1, 1, 1, 1),
                 ksize: Optional[Sequence[int]] = None, explicit_paddings: Sequence[int] = ()) -> WindowAttrs:
    """Checks a node's window attrs; `fail(message)` makes the exception (ValueError at graph
    construction, InvalidArgumentError in a kernel). `ksize` is given for pooling ops."""
    if data_format not in ("NHWC", "NCHW"):
        raise fail(f"{op_type} does not support data_format {data_format!r}: NHWC and NCHW only")
    strides = _four(strides, "stride", "strides", data_format, op_type, fail)
    dilations = _four(dilations, "dilation", "dilations", data_format, op_type, fail)
    window = None if ksize is None else _four(ksize, "ksize", "ksize", data_format, op_type, fail)
    explicit = _explicit_paddings(list(explicit_paddings), padding, data_format, fail)
    return WindowAttrs(
        op_type=op_type, padding=padding, data_format=data_format,
        strides=(strides[1], strides[2]), dilations=(dilations[1], dilations[2]),
        window=None if window is None else (window[1], window[2]), explicit=explicit,
        outer_strides=(strides[0], strides[3]), outer_dilations=(dilations[0], dilations[3]),
        outer_window=(1, 1) if window is None else (window[0], window[3]))


def node_window_attrs(get_attr: Callable[[str], Any], op_type: str, fail: Callable[[str], Exception],
                      names: Sequence[str]) -> WindowAttrs:
    """`window_attrs` from a node's attrs (an Operation's `get_attr` or a kernel context's
    `attr`); `names` lists which of dilations / ksize / explicit_paddings the op has."""
    kwargs = {name: get_attr(name) for name in names}
    return window_attrs(op_type, get_attr("data_format"), get_attr("padding"), get_attr("strides"),
                        fail, **kwargs)


def _explicit_paddings(values: list[int], padding: str, data_format: str,
                       fail: Callable[[str], Exception]) -> tuple[int, int, int, int]:
    if padding != "EXPLICIT":
        if values:
            raise fail("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT")
        return (0, 0, 0, 0)
    if len(values) != 8:
        raise fail(f"explicit_paddings attribute must contain 8 values, but got: {len(values)}")
    if any(p < 0 for p in values):
        raise fail(f"All elements of explicit_paddings must be nonnegative, but got {values}")
    pairs = [(values[2 * i], values[2 * i + 1]) for i in range(4)]
    h_axis, w_axis, c_axis = spatial_dims(data_format)
    if pairs[0] != (0, 0) or pairs[c_axis] != (0, 0):
        raise fail("Nonzero explicit padding in the batch or depth dimensions is not supported")
    return pairs[h_axis] + pairs[w_axis]


def window_output(size: int, window: int, stride: int, dilation: int, padding: str,
                  explicit: tuple[int, int] = (0, 0)) -> tuple[int, int, int]:
    """(output size, padding before, padding after) along one spatial axis; ValueError with
    TF's message when the window does not fit."""
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        needed = max(0, (out - 1) * stride + effective - size)
        return out, needed // 2, needed - needed // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    padded = size + before + after
    if padded < effective:
        raise ValueError(f"Negative dimension size caused by subtracting {effective} from {padded}")
    return (padded - effective) // stride + 1, before, after


def static_window_output(size: Dimension, window: Dimension, stride: int, dilation: int,
                         padding: str, explicit: tuple[int, int] = (0, 0)) -> Optional[int]:
    """`window_output`'s size for possibly-unknown static dimensions (None when unknown)."""
    if padding == "SAME" and size.value is not None:
        return -(-size.value // stride)
    if size.value is None or window.value is None:
        return None
    return window_output(size.value, window.value, stride, dilation, padding, explicit)[0]


@dataclasses.dataclass(frozen=True)
class Geometry:
    """One window operation at run time, in NHWC terms: input (n, h, w, c), window (kh, kw),
    strides, dilations, paddings and output size. Built once per input shape and cached."""

    n: int
    h: int
    w: int
    c: int
    kh: int
    kw: int
    sh: int
    sw: int
    dh: int
    dw: int
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int
    out_h: int
    out_w: int

    @classmethod
    def make(cls, attrs: WindowAttrs, nhwc: Sequence[int], window: tuple[int, int]) -> "Geometry":
        n, h, w, c = (int(d) for d in nhwc)
        kh, kw = window
        (sh, sw), (dh, dw), ex = attrs.strides, attrs.dilations, attrs.explicit
        try:
            out_h, top, bottom = window_output(h, kh, sh, dh, attrs.padding, ex[0:2])
            out_w, left, right = window_output(w, kw, sw, dw, attrs.padding, ex[2:4])
        except ValueError as err:
            raise invalid(f"{attrs.op_type}: {err}") from None
        return cls(n, h, w, c, kh, kw, sh, sw, dh, dw, top, bottom, left, right, out_h, out_w)

    @property
    def padded(self) -> bool:
        return bool(self.pad_top or self.pad_bottom or self.pad_left or self.pad_right)


def static_output_shape(op: Operation, attrs: WindowAttrs, x: TensorShape, window: tuple[Dimension, Dimension],
                        channels: Dimension) -> TensorShape:
    """The inferred output shape of a window op over a rank-4 input `x` (in the node's data
    format) whose window is `window` and whose output has `channels` channels."""
    h_axis, w_axis, c_axis = spatial_dims(attrs.data_format)
    dims = x.dims
    try:
        out_h = static_window_output(dims[h_axis], window[0], attrs.strides[0], attrs.dilations[0],
                                     attrs.padding, attrs.explicit[0:2])
        out_w = static_window_output(dims[w_axis], window[1], attrs.strides[1], attrs.dilations[1],
                                     attrs.padding, attrs.explicit[2:4])
    except ValueError as err:
        raise shape_error(op, str(err)) from None
    return TensorShape(to_data_format([dims[0], out_h, out_w, channels], attrs.data_format))


# ---------------------------------------------------------------------------------------------
# Wrapper-side argument normalization (TF1's nn_ops helpers)
# ---------------------------------------------------------------------------------------------
def get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """strides / dilations / ksize as the op's full list: an int or a 1-list applies to every
    spatial dim, an n-list to the spatial dims, an (n + 2)-list is taken as is."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, (int, np.integer)):
        value = [int(value)]
    else:
        value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} "
                         f"of length {len(value)}")
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def convert_padding(padding: Any, expected_length: int = 4) -> tuple[str, list[int]]:
    """A padding string, or a list of [before, after] pairs (one per dimension) meaning
    EXPLICIT padding: returns the (padding, explicit_paddings) attrs."""
    if isinstance(padding, bytes):
        padding = padding.decode()
    if padding == "EXPLICIT":
        raise ValueError("'EXPLICIT' is not a valid value for `padding`. To use explicit padding, "
                         "`padding` must be a list.")
    if not isinstance(padding, (list, tuple)):
        return padding, []
    explicit: list[int] = []
    for i, pair in enumerate(padding):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"When `padding` is a list, each element of `padding` must be a list/tuple "
                             f"of size 2. Received: padding={padding} with element at index {i}")
        explicit.extend(int(p) for p in pair)
    if len(padding) != expected_length:
        raise ValueError(f"When padding is a list, it must be of size {expected_length}. Received: "
                         f"padding={padding} of size {len(padding)}")
    return "EXPLICIT", explicit
