"""Checkpoint ops (white paper 3.3 "Fault tolerance"): SaveV2 / RestoreV2 write and read a
checkpoint bundle (tensorweave/lib/tensor_bundle.py, TF's V2 layout), MergeV2Checkpoints joins
the bundles that a sharded save writes per device; TF1's Save / SaveSlices / Restore /
RestoreSlice run on the same bundle layout, and ShardedFilename / ShardedFilespec name shards.

All are stateful (they touch files) and not differentiable. A tensor_names entry is the key in
the checkpoint; a shape_and_slices entry is "" for a whole tensor or TF's "dims slice" string
("10 4 0,5:-") for part of a partitioned tensor.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors, tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.lib import tensor_bundle, tensor_slice
from tensorweave.ops import _util

__all__: list[str] = []


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _scalar_string(value: Any, what: str) -> str:
    array = np.asarray(value, dtype=object)
    if array.size != 1:
        raise errors.InvalidArgumentError(None, None, f"Input {what} should be a scalar string, got "
                                          f"shape {list(array.shape)}")
    return _text(array.reshape(-1)[0])


def _strings(value: Any, count: int, what: str) -> list[str]:
    flat = [_text(v) for v in np.asarray(value, dtype=object).reshape(-1)]
    if len(flat) != count:
        raise errors.InvalidArgumentError(None, None, f"Expected {what} to have {count} elements, got "
                                          f"{len(flat)}")
    return flat


def _shape_check(op: Operation, positions: Sequence[int], rank: int, what: str) -> None:
    for i in positions:
        shape = op.inputs[i].shape
        if shape.ndims is not None and shape.ndims != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims} for '{op.name}' "
                             f"(op: '{op.type}') {what} input {i}.")


def _vector_length_check(op: Operation, positions: Sequence[int], n: int) -> None:
    for i in positions:
        shape = op.inputs[i].shape
        if shape.ndims == 1 and shape.dims[0].value is not None and shape.dims[0].value != n:
            raise ValueError(f"Dimension 0 in both shapes must be equal, but are "
                             f"{shape.dims[0].value} and {n} for '{op.name}' (op: '{op.type}').")


def _save_tensors(prefix: str, names: Sequence[str], specs: Sequence[str], tensors: Sequence[Any]) -> None:
    writer = tensor_bundle.BundleWriter(prefix)
    try:
        for name, spec, value in zip(names, specs, tensors):
            shape, extents = tensor_slice.parse_shape_and_slice(spec)
            if extents is None:
                writer.add(name, value)
            else:
                writer.add_slice(name, shape, extents, value)  # type: ignore[arg-type]
    except BaseException:
        writer.abort()
        raise
    writer.finish()


# ---------------------------------------------------------------------------------------------
# SaveV2 / RestoreV2 / MergeV2Checkpoints
# ---------------------------------------------------------------------------------------------
def _save_v2_shape(op: Operation) -> list[TensorShape]:
    n = len(op._get_attr("dtypes"))
    _shape_check(op, [0], 0, "prefix")
    _shape_check(op, [1, 2], 1, "tensor_names / shape_and_slices")
    _vector_length_check(op, [1, 2], n)
    return []


SaveV2 = define_op("SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string",
                                     "tensors: dtypes"],
                   attrs=["dtypes: list(type)"], shape_fn=_save_v2_shape, is_stateful=True, expensive=True)


def _save_kernel(type_attr: str, with_specs: bool) -> Callable[[Any], Callable[..., Any]]:
    """Kernel builder for SaveV2 / SaveSlices (`with_specs`: a shape_and_slices input) and Save."""

    def build(ctx: KernelContext) -> Callable[..., Any]:
        n = len(ctx.attr(type_attr))

        def save(prefix: Any, names: Any, *rest: Any) -> tuple:
            specs = _strings(rest[0], n, "shape_and_slices") if with_specs else [""] * n
            _save_tensors(_scalar_string(prefix, "prefix"), _strings(names, n, "tensor_names"), specs,
                          rest[1:] if with_specs else rest)
            return ()

        return save

    return build


SaveV2.kernel()(_save_kernel("dtypes", with_specs=True))


def _restore_shapes(op: Operation, specs_input: int) -> list[TensorShape]:
    """Known shapes where the spec is a constant slice; unknown elsewhere (whole tensors)."""
    n = len(op.outputs)
    specs = tensor_util.constant_value(op.inputs[specs_input])
    if specs is None or np.size(specs) != n:
        return [unknown_shape()] * n
    shapes = []
    for spec in np.asarray(specs, dtype=object).reshape(-1):
        shape, extents = tensor_slice.parse_shape_and_slice(_text(spec))
        if shape is None:
            shapes.append(unknown_shape())
        else:
            shapes.append(TensorShape([b - a for a, b in tensor_slice.resolve(extents, shape)]))  # type: ignore[arg-type]
    return shapes


def _restore_v2_shape(op: Operation) -> list[TensorShape]:
    _shape_check(op, [0], 0, "prefix")
    _shape_check(op, [1, 2], 1, "tensor_names / shape_and_slices")
    _vector_length_check(op, [1, 2], len(op.outputs))
    return _restore_shapes(op, 2)


RestoreV2 = define_op("RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
                      outputs=["tensors: dtypes"], attrs=["dtypes: list(type)"], shape_fn=_restore_v2_shape,
                      is_stateful=True, expensive=True)


@RestoreV2.kernel()
def _restore_v2_kernel(ctx: KernelContext) -> Callable[..., Any]:
    dtypes = list(ctx.attr("dtypes"))
    n = len(dtypes)

    def restore(prefix: Any, names: Any, specs: Any) -> Any:
        reader = tensor_bundle.BundleReader(_scalar_string(prefix, "prefix"))
        values = reader.read_many(_strings(names, n, "tensor_names"), dtypes,
                                  _strings(specs, n, "shape_and_slices"))
        return values[0] if n == 1 else values

    return restore


MergeV2Checkpoints = define_op(
    "MergeV2Checkpoints", inputs=["checkpoint_prefixes: string", "destination_prefix: string"],
    attrs=["delete_old_dirs: bool = true", "allow_missing_files: bool = false"],
    shape_fn=_util.no_outputs, is_stateful=True)


@MergeV2Checkpoints.kernel()
def _merge_kernel(ctx: KernelContext) -> Callable[..., Any]:
    delete_old_dirs = ctx.attr("delete_old_dirs")
    allow_missing = ctx.attr("allow_missing_files")

    def merge(prefixes: Any, destination: Any) -> tuple:
        parts = [_text(p) for p in np.asarray(prefixes, dtype=object).reshape(-1)]
        if allow_missing:
            parts = [p for p in parts if tensor_bundle.bundle_exists(p)]
        tensor_bundle.merge_bundles(parts, _scalar_string(destination, "destination_prefix"),
                                    delete_old_dirs)
        return ()

    return merge


# ---------------------------------------------------------------------------------------------
# TF1's Save / SaveSlices / Restore / RestoreSlice (same bundle layout, the filename its prefix)
# ---------------------------------------------------------------------------------------------
def _save_shape(op: Operation) -> list[TensorShape]:
    _shape_check(op, [0], 0, "filename")
    _shape_check(op, [1], 1, "tensor_names")
    _vector_length_check(op, [1], len(op._get_attr("T")))
    if op.type == "SaveSlices":
        _vector_length_check(op, [2], len(op._get_attr("T")))
    return []


Save = define_op("Save", inputs=["filename: string", "tensor_names: string", "data: T"],
                 attrs=["T: list(type)"], shape_fn=_save_shape, is_stateful=True, expensive=True)
SaveSlices = define_op("SaveSlices", inputs=["filename: string", "tensor_names: string",
                                             "shapes_and_slices: string", "data: T"],
                       attrs=["T: list(type)"], shape_fn=_save_shape, is_stateful=True, expensive=True)


Save.kernel()(_save_kernel("T", with_specs=False))
SaveSlices.kernel()(_save_kernel("T", with_specs=True))


def _restore_one_shape(op: Operation) -> list[TensorShape]:
    _shape_check(op, [0, 1], 0, "file_pattern / tensor_name")
    if op.type == "RestoreSlice":
        _shape_check(op, [2], 0, "shape_and_slice")
        spec = tensor_util.constant_value(op.inputs[2])
        if spec is not None:
            shape, extents = tensor_slice.parse_shape_and_slice(_text(np.asarray(spec, dtype=object).item()))
            if shape is not None:
                return [TensorShape([b - a for a, b in tensor_slice.resolve(extents, shape)])]  # type: ignore[arg-type]
    return [unknown_shape()]


Restore = define_op("Restore", inputs=["file_pattern: string", "tensor_name: string"],
                    outputs=["tensor: dt"], attrs=["dt: type", "preferred_shard: int = -1"],
                    shape_fn=_restore_one_shape, is_stateful=True, expensive=True)
RestoreSlice = define_op("RestoreSlice", inputs=["file_pattern: string", "tensor_name: string",
                                                 "shape_and_slice: string"],
                         outputs=["tensor: dt"], attrs=["dt: type", "preferred_shard: int = -1"],
                         shape_fn=_restore_one_shape, is_stateful=True, expensive=True)


def _restore_one_kernel(ctx: KernelContext) -> Callable[..., Any]:
    dtype = ctx.attr("dt")

    def restore(pattern: Any, name: Any, spec: Any = "") -> Any:
        reader = tensor_bundle.BundleReader(_scalar_string(pattern, "file_pattern"))
        return reader.read_many([_scalar_string(name, "tensor_name")], [dtype],
                                [_scalar_string(spec, "shape_and_slice")])[0]

    return restore


Restore.kernel()(_restore_one_kernel)
RestoreSlice.kernel()(_restore_one_kernel)


# ---------------------------------------------------------------------------------------------
# Shard names
# ---------------------------------------------------------------------------------------------
def _sharded_filename_shape(op: Operation) -> list[TensorShape]:
    _shape_check(op, range(len(op.inputs)), 0, "basename / shard / num_shards")
    return [TensorShape([])]


ShardedFilename = define_op("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
                            outputs=["filename: string"], shape_fn=_sharded_filename_shape)
ShardedFilespec = define_op("ShardedFilespec", inputs=["basename: string", "num_shards: int32"],
                            outputs=["filename: string"], shape_fn=_sharded_filename_shape)


@ShardedFilename.kernel()
def _sharded_filename_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def name(basename: Any, shard: Any, num_shards: Any) -> np.ndarray:
        base = _scalar_string(basename, "basename")
        return np.array(f"{base}-{int(shard):05d}-of-{int(num_shards):05d}".encode("utf-8"), dtype=object)

    return name


@ShardedFilespec.kernel()
def _sharded_filespec_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def spec(basename: Any, num_shards: Any) -> np.ndarray:
        base = _scalar_string(basename, "basename")
        return np.array(f"{base}-?????-of-{int(num_shards):05d}".encode("utf-8"), dtype=object)

    return spec


for _op in (SaveV2, RestoreV2, MergeV2Checkpoints, Save, SaveSlices, Restore, RestoreSlice,
            ShardedFilename, ShardedFilespec):
    _op.not_differentiable()


# ---------------------------------------------------------------------------------------------
# Wrappers (TF's generated io_ops names)
# ---------------------------------------------------------------------------------------------
def save_v2(prefix: Any, tensor_names: Any, shape_and_slices: Any, tensors: Sequence[Any],
            name: Optional[str] = None) -> Any:
    """Saves `tensors` under `tensor_names` in the V2 checkpoint `prefix`."""
    return apply_op(SaveV2, name=name, prefix=prefix, tensor_names=tensor_names,
                    shape_and_slices=shape_and_slices, tensors=tensors)


def restore_v2(prefix: Any, tensor_names: Any, shape_and_slices: Any, dtypes: Sequence[Any],
               name: Optional[str] = None) -> Any:
    """Restores tensors `tensor_names` (of `dtypes`) from the V2 checkpoint `prefix`; a list."""
    dtypes = [_dtypes.as_dtype(d).base_dtype for d in dtypes]
    result = apply_op(RestoreV2, name=name, prefix=prefix, tensor_names=tensor_names,
                      shape_and_slices=shape_and_slices, dtypes=dtypes)
    return result if isinstance(result, list) else [result]


def merge_v2_checkpoints(checkpoint_prefixes: Any, destination_prefix: Any, delete_old_dirs: bool = True,
                         allow_missing_files: bool = False, name: Optional[str] = None) -> Any:
    """Merges the per-device checkpoints `checkpoint_prefixes` into `destination_prefix`."""
    return apply_op(MergeV2Checkpoints, name=name, checkpoint_prefixes=checkpoint_prefixes,
                    destination_prefix=destination_prefix, delete_old_dirs=delete_old_dirs,
                    allow_missing_files=allow_missing_files)


def save(filename: Any, tensor_names: Any, data: Sequence[Any], name: Optional[str] = None) -> Any:
    return apply_op(Save, name=name, filename=filename, tensor_names=tensor_names, data=data)


def save_slices(filename: Any, tensor_names: Any, shapes_and_slices: Any, data: Sequence[Any],
                name: Optional[str] = None) -> Any:
    return apply_op(SaveSlices, name=name, filename=filename, tensor_names=tensor_names,
                    shapes_and_slices=shapes_and_slices, data=data)


def restore(file_pattern: Any, tensor_name: Any, dt: Any, preferred_shard: int = -1,
            name: Optional[str] = None) -> Any:
    return apply_op(Restore, name=name, file_pattern=file_pattern, tensor_name=tensor_name,
                    dt=_dtypes.as_dtype(dt).base_dtype, preferred_shard=preferred_shard)


def restore_slice(file_pattern: Any, tensor_name: Any, shape_and_slice: Any, dt: Any,
                  preferred_shard: int = -1, name: Optional[str] = None) -> Any:
    return apply_op(RestoreSlice, name=name, file_pattern=file_pattern, tensor_name=tensor_name,
                    shape_and_slice=shape_and_slice, dt=_dtypes.as_dtype(dt).base_dtype,
                    preferred_shard=preferred_shard)


def sharded_filename(basename: Any, shard: Any, num_shards: Any, name: Optional[str] = None) -> Any:
    return apply_op(ShardedFilename, name=name, basename=basename, shard=shard, num_shards=num_shards)


def sharded_filespec(basename: Any, num_shards: Any, name: Optional[str] = None) -> Any:
    return apply_op(ShardedFilespec, name=name, basename=basename, num_shards=num_shards)
