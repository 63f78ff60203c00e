"""Resizing: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea, the gradient ops
ResizeBilinearGrad, ResizeNearestNeighborGrad, ResizeBicubicGrad, and the TF1 wrappers
tf.image.resize_bilinear, resize_nearest_neighbor, resize_bicubic and resize_area.

Each kernel follows TF's CPU kernel: the scale is in/out (or (in-1)/(out-1) with
`align_corners`), a source coordinate is out*scale (legacy) or (out+0.5)*scale-0.5
(`half_pixel_centers`; nearest neighbour omits the -0.5), and the arithmetic is float32 in TF's
order, so results agree to float32 rounding. Work is per axis: coordinates, taps and weights
are computed once per output row and column, then whole images are gathered and blended.
Gradients (and ResizeArea, a box filter) use the per-axis weights as dense matrices.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework import tensor_util
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import format_dims, invalid, register_kernel, shape_error, with_rank

__all__ = ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area"]

_TYPES = "{int8, uint8, int16, uint16, int32, int64, float16, float32, float64}"
_FLAGS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]
_F32 = np.float32


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------
def _resize_shape(op: Operation) -> list[TensorShape]:
    images = with_rank(op, op.inputs[0].shape, 4)
    size = with_rank(op, op.inputs[1].shape, 1)
    if size.dims[0].value not in (None, 2):
        raise shape_error(op, f"Dimension must be 2 but is {size.dims[0].value}")
    value = tensor_util.constant_value(op.inputs[1])
    hw: list[Any] = [None, None] if value is None else [int(v) for v in np.reshape(value, -1)]
    return [TensorShape([images.dims[0], hw[0], hw[1], images.dims[3]])]


def _like_original(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 4)
    return [with_rank(op, op.inputs[1].shape, 4)]


ResizeBilinear = define_op("ResizeBilinear", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
                           attrs=[f"T: {_TYPES}"] + _FLAGS, shape_fn=_resize_shape)
ResizeNearestNeighbor = define_op("ResizeNearestNeighbor", inputs=["images: T", "size: int32"],
                                  outputs=["resized_images: T"], attrs=[f"T: {_TYPES}"] + _FLAGS,
                                  shape_fn=_resize_shape)
ResizeBicubic = define_op("ResizeBicubic", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
                          attrs=[f"T: {_TYPES}"] + _FLAGS, shape_fn=_resize_shape)
ResizeArea = define_op("ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
                       attrs=[f"T: {_TYPES}", "align_corners: bool = false"], shape_fn=_resize_shape)
ResizeBilinearGrad = define_op("ResizeBilinearGrad", inputs=["grads: float", "original_image: T"],
                               outputs=["output: T"], attrs=["T: {float32, float16, float64}"] + _FLAGS,
                               shape_fn=_like_original)
ResizeBicubicGrad = define_op("ResizeBicubicGrad", inputs=["grads: float", "original_image: T"],
                              outputs=["output: T"], attrs=["T: {float32, float64}"] + _FLAGS,
                              shape_fn=_like_original)


def _nn_grad_shape(op: Operation) -> list[TensorShape]:
    grads = with_rank(op, op.inputs[0].shape, 4)
    shape = _resize_shape(op)[0]
    return [TensorShape([grads.dims[0], shape.dims[1], shape.dims[2], grads.dims[3]])]


ResizeNearestNeighborGrad = define_op("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"],
                                      outputs=["output: T"],
                                      attrs=["T: {uint8, int8, int32, float16, float32, float64}"] + _FLAGS,
                                      shape_fn=_nn_grad_shape)


# ---------------------------------------------------------------------------------------------
# Per-axis geometry (TF's image_resizer_state.h and the kernels' CachedInterpolation)
# ---------------------------------------------------------------------------------------------
def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _source(out_size: int, scale: np.float32, half_pixel: bool, offset: float = 0.5) -> np.ndarray:
    """Source coordinates of the output samples, float32 as TF computes them."""
    x = np.arange(out_size, dtype=_F32)
    return (x + _F32(0.5)) * scale - _F32(offset) if half_pixel else x * scale


def _linear_axis(in_size: int, out_size: int, ac: bool, hpc: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    src = _source(out_size, _scale(in_size, out_size, ac), hpc)
    floor = np.floor(src)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lower, upper, (src - floor).astype(_F32)


def _nearest_axis(in_size: int, out_size: int, ac: bool, hpc: bool) -> np.ndarray:
    src = _source(out_size, _scale(in_size, out_size, ac), hpc, offset=0.0)
    # roundf rounds halves away from zero; the coordinates are non-negative.
    index = np.floor(src + _F32(0.5)) if ac else np.floor(src)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if hpc else index


_TABLE_SIZE = 1024


def _cubic_table(a: float) -> np.ndarray:
    x = (np.arange(_TABLE_SIZE + 1) * (1.0 / _TABLE_SIZE)).astype(_F32)
    near = ((_F32(a + 2) * x - _F32(a + 3)) * x * x + _F32(1)).astype(_F32)
    x1 = x + _F32(1)
    far = (((_F32(a) * x1 - _F32(5 * a)) * x1 + _F32(8 * a)) * x1 - _F32(4 * a)).astype(_F32)
    return np.stack([near, far], axis=1)


_KEYS_TABLE = _cubic_table(-0.5)      # half_pixel_centers: Keys' kernel, edge taps dropped
_LEGACY_TABLE = _cubic_table(-0.75)   # legacy: edge taps repeated


def _cubic_axis(in_size: int, out_size: int, ac: bool, hpc: bool) -> tuple[np.ndarray, np.ndarray]:
    """[out, 4] tap indices and float32 weights of TF's bicubic kernel."""
    src = _source(out_size, _scale(in_size, out_size, ac), hpc)
    loc = np.floor(src).astype(np.int64)
    delta = (src - loc).astype(_F32)
    offset = np.rint(delta * _F32(_TABLE_SIZE)).astype(np.int64)   # lrintf: half to even
    table = _KEYS_TABLE if hpc else _LEGACY_TABLE
    wanted = loc[:, None] + np.arange(-1, 3)
    index = np.clip(wanted, 0, in_size - 1)
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]], axis=1)
    if hpc:
        weights = np.where(index == wanted, weights, _F32(0))
        total = weights[:, 0] + weights[:, 1] + weights[:, 2] + weights[:, 3]
        big = np.abs(total) >= _F32(1000) * np.finfo(_F32).tiny
        weights = np.where(big[:, None], weights * (_F32(1) / np.where(big, total, _F32(1)))[:, None], weights)
    return index, weights.astype(_F32)


def _dense(index: np.ndarray, weights: np.ndarray, in_size: int) -> np.ndarray:
    """The [out, in] matrix of an axis' taps (repeated taps add up)."""
    matrix = np.zeros((index.shape[0], in_size), np.float64)
    rows = np.broadcast_to(np.arange(index.shape[0])[:, None], index.shape)
    np.add.at(matrix, (rows, index), weights)
    return matrix


def _area_axis(in_size: int, out_size: int, ac: bool) -> np.ndarray:
    """[out, in] float32 box-filter weights of ResizeArea (the overlap of each input cell)."""
    scale = _scale(in_size, out_size, ac)
    x = np.arange(out_size, dtype=_F32)
    start, end = x * scale, (x + _F32(1)) * scale
    cells = np.arange(int(np.ceil(end.max())) + 1, dtype=_F32)
    overlap = np.minimum(cells[None, :] + _F32(1), end[:, None]) - np.maximum(cells[None, :], start[:, None])
    inside = (cells[None, :] >= np.floor(start)[:, None]) & (cells[None, :] < np.ceil(end)[:, None])
    overlap = np.where(inside, overlap, _F32(0)).astype(_F32)
    matrix = np.zeros((out_size, in_size), _F32)
    np.add.at(matrix.T, np.minimum(cells.astype(np.int64), in_size - 1), overlap.T)
    return matrix


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
def _read_size(op_type: str, images: np.ndarray, size: Any) -> tuple[int, int]:
    if images.ndim != 4:
        raise invalid(f"{op_type}: input must be 4-dimensional, got {format_dims(images.shape)}")
    size = np.asarray(size)
    if size.ndim != 1:
        raise invalid(f"{op_type}: shape_t must be 1-dimensional, got {format_dims(size.shape)}")
    if size.shape[0] != 2:
        raise invalid(f"{op_type}: shape_t must have two elements, got {size.shape[0]}")
    height, width = int(size[0]), int(size[1])
    if height <= 0 or width <= 0:
        raise invalid(f"{op_type}: output dimensions must be positive, got {height}x{width}")
    if images.shape[1] == 0 or images.shape[2] == 0:
        raise invalid(f"{op_type}: input image must be of non-zero size, got {format_dims(images.shape)}")
    return height, width


def _flags(ctx: KernelContext) -> tuple[bool, bool]:
    ac = bool(ctx.attr("align_corners"))
    hpc = bool(ctx.attr("half_pixel_centers")) if "half_pixel_centers" in ctx.op.op_def.attrs else False
    if ac and hpc:
        raise invalid(f"{ctx.op.type}: If half_pixel_centers is True, align_corners must be False.")
    return ac, hpc


def _geometry_kernel(compute: Callable[..., np.ndarray]) -> Callable[[KernelContext], Any]:
    """A kernel calling `compute(images, out_h, out_w, ac, hpc)`; flags are checked when run."""
    def build(ctx: KernelContext) -> Callable[..., Any]:
        op_type = ctx.op.type

        def kernel(images: np.ndarray, size: Any) -> np.ndarray:
            ac, hpc = _flags(ctx)
            height, width = _read_size(op_type, images, size)
            return compute(images, height, width, ac, hpc)

        return kernel
    return build


def _take_rows(images: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take(images, index, axis=1)


def _take_cols(images: np.ndarray, index: np.ndarray) -> np.ndarray:
    """images[:, :, index] gathered over the flattened (width, channels) axis: one contiguous
    take instead of a fancy index with a tiny inner dimension (about twice as fast)."""
    b, h, w, c = images.shape
    flat = (index[:, None] * c + np.arange(c)).reshape(-1)
    return np.take(images.reshape(b, h, w * c), flat, axis=2).reshape(b, h, index.shape[0], c)


def _rows_used(*indices: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The input rows the taps read, and each tap's positions among them: interpolating along
    x on those rows first, then gathering, does the same float operations on fewer elements."""
    rows, inverse = np.unique(np.concatenate(indices), return_inverse=True)
    return rows, np.split(inverse, len(indices))


def bilinear(images: np.ndarray, height: int, width: int, ac: bool, hpc: bool) -> np.ndarray:
    x = images.astype(_F32, copy=False)
    y_lo, y_hi, y_lerp = _linear_axis(x.shape[1], height, ac, hpc)
    x_lo, x_hi, x_lerp = _linear_axis(x.shape[2], width, ac, hpc)
    rows, (top_at, bottom_at) = _rows_used(y_lo, y_hi)
    sub = _take_rows(x, rows)
    left, right = _take_cols(sub, x_lo), _take_cols(sub, x_hi)
    blended = left + (right - left) * x_lerp[None, None, :, None]    # TF's top and bottom rows
    top, bottom = _take_rows(blended, top_at), _take_rows(blended, bottom_at)
    return top + (bottom - top) * y_lerp[None, :, None, None]


def nearest(images: np.ndarray, height: int, width: int, ac: bool, hpc: bool) -> np.ndarray:
    rows = _nearest_axis(images.shape[1], height, ac, hpc)
    cols = _nearest_axis(images.shape[2], width, ac, hpc)
    return _take_cols(_take_rows(images, rows), cols)


def bicubic(images: np.ndarray, height: int, width: int, ac: bool, hpc: bool) -> np.ndarray:
    x = images.astype(_F32, copy=False)
    y_index, y_weights = _cubic_axis(x.shape[1], height, ac, hpc)
    x_index, x_weights = _cubic_axis(x.shape[2], width, ac, hpc)
    rows, taps = _rows_used(*(y_index[:, k] for k in range(4)))
    sub = _take_rows(x, rows)
    # Along x first, w0*v0 + w1*v1 + w2*v2 + w3*v3 in TF's order, then the same along y.
    along_x = _take_cols(sub, x_index[:, 0]) * x_weights[None, None, :, 0, None]
    for k in range(1, 4):
        along_x += _take_cols(sub, x_index[:, k]) * x_weights[None, None, :, k, None]
    out = _take_rows(along_x, taps[0]) * y_weights[None, :, 0, None, None]
    for k in range(1, 4):
        out += _take_rows(along_x, taps[k]) * y_weights[None, :, k, None, None]
    return out


def area(images: np.ndarray, height: int, width: int, ac: bool, hpc: bool) -> np.ndarray:
    x = images.astype(_F32, copy=False)
    in_h, in_w = x.shape[1], x.shape[2]
    wy, wx = _area_axis(in_h, height, ac), _area_axis(in_w, width, ac)
    out = np.einsum("yi,bijc,xj->byxc", wy, x, wx, optimize=True).astype(_F32)
    return out * (_F32(1) / (_scale(in_h, height, ac) * _scale(in_w, width, ac)))


def _spread(grads: np.ndarray, wy: np.ndarray, wx: np.ndarray, dtype: Any) -> np.ndarray:
    """The transpose of a separable resize: each output gradient goes back to its taps."""
    work = np.float64 if dtype == np.float64 else _F32
    out = np.einsum("yi,byxc,xj->bijc", wy.astype(work), grads.astype(work), wx.astype(work), optimize=True)
    return out.astype(dtype)


def _linear_matrix(in_size: int, out_size: int, ac: bool, hpc: bool) -> np.ndarray:
    lower, upper, lerp = _linear_axis(in_size, out_size, ac, hpc)
    return _dense(np.stack([lower, upper], 1), np.stack([_F32(1) - lerp, lerp], 1), in_size)


def _grad_kernel(matrix: Callable[[int, int, bool, bool], np.ndarray]) -> Callable[[KernelContext], Any]:
    def build(ctx: KernelContext) -> Callable[..., Any]:
        op_type = ctx.op.type
        dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

        def kernel(grads: np.ndarray, original: np.ndarray) -> np.ndarray:
            ac, hpc = _flags(ctx)
            if grads.ndim != 4 or original.ndim != 4:
                raise invalid(f"{op_type}: input_grad and original_image must be 4-dimensional, got "
                              f"{format_dims(grads.shape)} and {format_dims(original.shape)}")
            if grads.shape[0] != original.shape[0] or grads.shape[3] != original.shape[3]:
                raise invalid(f"{op_type}: input_grad and original_image must agree in batch and depth, got "
                              f"{format_dims(grads.shape)} and {format_dims(original.shape)}")
            wy = matrix(original.shape[1], grads.shape[1], ac, hpc)
            wx = matrix(original.shape[2], grads.shape[2], ac, hpc)
            return _spread(grads, wy, wx, dtype)

        return kernel
    return build


def _nearest_matrix(in_size: int, out_size: int, ac: bool, hpc: bool) -> np.ndarray:
    index = _nearest_axis(in_size, out_size, ac, hpc)
    return _dense(index[:, None], np.ones((out_size, 1), np.float64), in_size)


def _cubic_matrix(in_size: int, out_size: int, ac: bool, hpc: bool) -> np.ndarray:
    return _dense(*_cubic_axis(in_size, out_size, ac, hpc), in_size)


register_kernel(ResizeBilinear)(_geometry_kernel(bilinear))
register_kernel(ResizeNearestNeighbor)(_geometry_kernel(nearest))
register_kernel(ResizeBicubic)(_geometry_kernel(bicubic))
register_kernel(ResizeArea)(_geometry_kernel(area))
register_kernel(ResizeBilinearGrad)(_grad_kernel(_linear_matrix))
register_kernel(ResizeBicubicGrad)(_grad_kernel(_cubic_matrix))


@register_kernel(ResizeNearestNeighborGrad)
def _nearest_grad_kernel(ctx: KernelContext) -> Callable[..., Any]:
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)

    def kernel(grads: np.ndarray, size: Any) -> np.ndarray:
        ac, hpc = _flags(ctx)
        height, width = _read_size(ctx.op.type, grads, size)
        wy = _nearest_matrix(height, grads.shape[1], ac, hpc)
        wx = _nearest_matrix(width, grads.shape[2], ac, hpc)
        if dtype.kind in "iu":
            out = np.einsum("yi,byxc,xj->bijc", wy.astype(np.int64), grads.astype(np.int64), wx.astype(np.int64))
            return out.astype(dtype)
        return _spread(grads, wy, wx, dtype)

    return kernel


for _grad_op in (ResizeBilinearGrad, ResizeBicubicGrad, ResizeNearestNeighborGrad, ResizeArea):
    _grad_op.not_differentiable()   # as in TF, which registers no gradient for these


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def _size(size: Any) -> Any:
    return convert_to_tensor(size, dtype="int32", name="size")


def resize_bilinear(images: Any, size: Any, align_corners: bool = False, name: Optional[str] = None,
                    half_pixel_centers: bool = False) -> Any:
    """Resizes `images` [batch, height, width, channels] to `size` by bilinear interpolation
    (float32 output)."""
    return apply_op(ResizeBilinear, name=name, images=images, size=_size(size), align_corners=align_corners,
                    half_pixel_centers=half_pixel_centers)


def resize_nearest_neighbor(images: Any, size: Any, align_corners: bool = False, name: Optional[str] = None,
                            half_pixel_centers: bool = False) -> Any:
    """Resizes `images` to `size` by nearest-neighbour sampling (the input's dtype)."""
    return apply_op(ResizeNearestNeighbor, name=name, images=images, size=_size(size),
                    align_corners=align_corners, half_pixel_centers=half_pixel_centers)


def resize_bicubic(images: Any, size: Any, align_corners: bool = False, name: Optional[str] = None,
                   half_pixel_centers: bool = False) -> Any:
    """Resizes `images` to `size` by bicubic interpolation (float32 output)."""
    return apply_op(ResizeBicubic, name=name, images=images, size=_size(size), align_corners=align_corners,
                    half_pixel_centers=half_pixel_centers)


def resize_area(images: Any, size: Any, align_corners: bool = False, name: Optional[str] = None) -> Any:
    """Resizes `images` to `size` by area (box) averaging (float32 output)."""
    return apply_op(ResizeArea, name=name, images=images, size=_size(size), align_corners=align_corners)
