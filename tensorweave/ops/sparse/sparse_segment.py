"""Segment reductions over selected rows (TF1's math_ops.sparse_segment_*): SparseSegmentSum,
SparseSegmentMean, SparseSegmentSqrtN, their *WithNumSegments forms, and the gradient helpers
SparseSegmentMeanGrad and SparseSegmentSqrtNGrad. output[s] reduces data[indices[j]] over the j
with segment_ids[j] == s; ids must be sorted; segments with no rows are 0. Gradients are in
grad.py.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import const_int, format_dims, invalid

__all__: list[str] = []

_T = "T: {float16, float32, float64}"
_IDX = ["Tidx: {int32, int64} = int32", "Tsegmentids: {int32, int64} = int32"]


def _segment_shape(op: Operation) -> list[TensorShape]:
    data = op.inputs[0].shape
    op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(1)
    if data.ndims is None:
        return [unknown_shape()]
    rows = const_int(op.inputs[3]) if len(op.inputs) > 3 else None
    return [TensorShape([rows] + data.as_list()[1:])]


_PLAIN = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
_WITH_N = _PLAIN + ["num_segments: Tnumsegments"]
_N_ATTR = "Tnumsegments: {int32, int64} = int32"
SparseSegmentSum = define_op("SparseSegmentSum", inputs=_PLAIN, outputs=["output: T"],
                             attrs=["T: {float16, float32, float64, int32, int64}"] + _IDX,
                             shape_fn=_segment_shape)
SparseSegmentMean = define_op("SparseSegmentMean", inputs=_PLAIN, outputs=["output: T"], attrs=[_T] + _IDX,
                              shape_fn=_segment_shape)
SparseSegmentSqrtN = define_op("SparseSegmentSqrtN", inputs=_PLAIN, outputs=["output: T"], attrs=[_T] + _IDX,
                               shape_fn=_segment_shape)
SparseSegmentSumWithNumSegments = define_op(
    "SparseSegmentSumWithNumSegments", inputs=_WITH_N, outputs=["output: T"],
    attrs=["T: {float16, float32, float64, int32, int64}"] + _IDX + [_N_ATTR], shape_fn=_segment_shape)
SparseSegmentMeanWithNumSegments = define_op(
    "SparseSegmentMeanWithNumSegments", inputs=_WITH_N, outputs=["output: T"], attrs=[_T] + _IDX + [_N_ATTR],
    shape_fn=_segment_shape)
SparseSegmentSqrtNWithNumSegments = define_op(
    "SparseSegmentSqrtNWithNumSegments", inputs=_WITH_N, outputs=["output: T"],
    attrs=[_T] + _IDX + [_N_ATTR], shape_fn=_segment_shape)


def _check(data: np.ndarray, indices: np.ndarray, ids: np.ndarray, num: Optional[int]) -> int:
    """TF's checks; returns the number of output rows."""
    if indices.ndim != 1:
        raise invalid(f"indices should be a vector, got shape {format_dims(indices.shape)}")
    if ids.ndim != 1:
        raise invalid(f"segment_ids should be a vector, got shape {format_dims(ids.shape)}")
    if indices.size != ids.size:
        raise invalid(f"segment_ids and indices should have same size. segment_ids shape: "
                      f"{format_dims(ids.shape)}, indices shape: {format_dims(indices.shape)}")
    if data.ndim < 1:
        raise invalid("Shape must be at least rank 1 but is rank 0")
    rows = data.shape[0]
    bad = np.flatnonzero((indices < 0) | (indices >= rows))
    if bad.size:
        i = int(bad[0])
        raise invalid(f"Bad: indices[{i}] == {int(indices[i])} out of range [0, {rows})")
    if ids.size and ids[0] < 0:
        raise invalid(f"segment ids must be >= 0, got {int(ids[0])}")
    if ids.size > 1 and np.any(np.diff(ids) < 0):
        raise invalid("segment ids are not increasing")
    last = int(ids[-1]) + 1 if ids.size else 0
    if num is None:
        return last
    if last > num:
        raise invalid(f"segment ids must be < num_segments, got {last - 1} >= {num}")
    return num


def _segment_kernel(mode: str) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        def compute(data: Any, indices: Any, ids: Any, num: Any = None) -> Any:
            out_rows = _check(data, indices, ids, None if num is None else int(num))
            out = np.zeros((out_rows,) + data.shape[1:], data.dtype)
            np.add.at(out, ids, data[indices])
            if mode != "sum":
                counts = np.bincount(ids, minlength=out_rows).astype(data.dtype)
                scale = counts if mode == "mean" else np.sqrt(counts)
                scale = np.where(scale == 0, 1, scale).reshape((-1,) + (1,) * (data.ndim - 1))
                out = (out / scale).astype(data.dtype)
            return out
        return compute
    return build


for _op, _mode in ((SparseSegmentSum, "sum"), (SparseSegmentMean, "mean"), (SparseSegmentSqrtN, "sqrtn"),
                   (SparseSegmentSumWithNumSegments, "sum"), (SparseSegmentMeanWithNumSegments, "mean"),
                   (SparseSegmentSqrtNWithNumSegments, "sqrtn")):
    _op.kernel()(_segment_kernel(_mode))


# ---------------------------------------------------------------------------------------------
# Gradient helpers: scatter each segment's gradient back to the rows it read, scaled
# ---------------------------------------------------------------------------------------------
def _grad_shape(op: Operation) -> list[TensorShape]:
    grad = op.inputs[0].shape
    if grad.ndims is None:
        return [unknown_shape()]
    return [TensorShape([const_int(op.inputs[3])] + grad.as_list()[1:])]


_GRAD = dict(inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids", "output_dim0: int32"],
             outputs=["output: T"], attrs=["T: {float32, float64}"] + _IDX, shape_fn=_grad_shape)
SparseSegmentMeanGrad = define_op("SparseSegmentMeanGrad", **_GRAD)  # type: ignore[arg-type]
SparseSegmentSqrtNGrad = define_op("SparseSegmentSqrtNGrad", **_GRAD)  # type: ignore[arg-type]
SparseSegmentMeanGrad.not_differentiable()
SparseSegmentSqrtNGrad.not_differentiable()


def _segment_grad_kernel(mode: str) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        def compute(grad: Any, indices: Any, ids: Any, dim0: Any) -> Any:
            if indices.shape != ids.shape:
                raise invalid("segment_ids and indices should have same size.")
            rows = int(dim0)
            bad = np.flatnonzero((indices < 0) | (indices >= rows))
            if bad.size:
                i = int(bad[0])
                raise invalid(f"Index {int(indices[i])} out of range [0, {rows}).")
            if ids.size and (ids.min() < 0 or ids.max() >= grad.shape[0]):
                raise invalid(f"Segment id out of range [0, {grad.shape[0]}).")
            counts = np.bincount(ids, minlength=grad.shape[0]).astype(grad.dtype)
            scale = counts if mode == "mean" else np.sqrt(counts)
            scale = np.where(scale == 0, 1, scale)
            out = np.zeros((rows,) + grad.shape[1:], grad.dtype)
            np.add.at(out, indices, grad[ids] / scale[ids].reshape((-1,) + (1,) * (grad.ndim - 1)))
            return out
        return compute
    return build


SparseSegmentMeanGrad.kernel()(_segment_grad_kernel("mean"))
SparseSegmentSqrtNGrad.kernel()(_segment_grad_kernel("sqrtn"))
