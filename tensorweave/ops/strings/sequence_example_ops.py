"""ParseSequenceExampleV2: serialized tf.train.SequenceExample protos into the context's
features (parsed as an Example's are, example_ops.FeatureSet) and the feature lists' features
(not differentiable).

A feature list is a sequence of steps (Feature messages). A dense one (FixedLenSequenceFeature)
becomes [batch, longest sequence] + step shape, zero-padded, with each record's number of steps
in `feature_list_dense_lengths`; every step must hold exactly the step shape's number of values.
A missing dense feature list is an error unless it is listed as assumed empty. A sparse one
(VarLenFeature) becomes a SparseTensor with [record, step, position] indices. A scalar
`serialized` parses one record, with no batch dimension (parse_single_sequence_example)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.lib.example_protos import SequenceExample
from tensorweave.ops._util import invalid, shape_error
from tensorweave.ops.strings.example_ops import (
    _LIST_OF, _TYPE_WORD, FeatureSet, _keys, _Where, decode, keyed_cache, records_of)
from tensorweave.ops.strings.string_ops import to_object_array

__all__ = ["ParseSequenceExampleV2", "parse_sequence_example_op"]


def _shape_fn(op: Operation) -> list[TensorShape]:
    batch = op.inputs[0].shape
    if batch.ndims is not None and batch.ndims > 1:
        raise shape_error(op, f"Shape must be at most rank 1 but is rank {batch.ndims}")
    known = batch.ndims is not None

    def rank_plus(n: int) -> Any:
        return batch.ndims + n if known else None

    def batched(shape: TensorShape) -> TensorShape:
        return batch.concatenate(shape) if known else TensorShape(None)

    n_ctx, n_list = op._get_attr("Ncontext_sparse"), op._get_attr("Nfeature_list_sparse")
    context_dense = [batched(s) for s in op._get_attr("context_dense_shapes")]
    list_dense = [batched(TensorShape([None]).concatenate(s)) for s in op._get_attr("feature_list_dense_shapes")]
    return ([TensorShape([None, rank_plus(1)])] * n_ctx + [TensorShape([None])] * n_ctx
            + [TensorShape([rank_plus(1)])] * n_ctx + context_dense
            + [TensorShape([None, rank_plus(2)])] * n_list + [TensorShape([None])] * n_list
            + [TensorShape([rank_plus(2)])] * n_list + list_dense
            + [batch if known else TensorShape(None)] * len(list_dense))


ParseSequenceExampleV2 = define_op(
    "ParseSequenceExampleV2",
    inputs=["serialized: string", "debug_name: string", "context_sparse_keys: string",
            "context_dense_keys: string", "context_ragged_keys: string", "feature_list_sparse_keys: string",
            "feature_list_dense_keys: string", "feature_list_ragged_keys: string",
            "feature_list_dense_missing_assumed_empty: bool", "context_dense_defaults: Tcontext_dense"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64", "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64", "context_dense_values: Tcontext_dense",
             "context_ragged_values: context_ragged_value_types",
             "context_ragged_row_splits: context_ragged_split_types",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types",
             "feature_list_dense_lengths: Nfeature_list_dense * int64",
             "feature_list_ragged_values: feature_list_ragged_value_types",
             "feature_list_ragged_outer_splits: feature_list_ragged_split_types",
             "feature_list_ragged_inner_splits: feature_list_ragged_split_types"],
    attrs=["Ncontext_sparse: int >= 0", "Tcontext_dense: list(type) >= 0",
           "Nfeature_list_sparse: int >= 0", "Nfeature_list_dense: int >= 0",
           "context_sparse_types: list(type) >= 0", "context_ragged_value_types: list(type) >= 0",
           "context_ragged_split_types: list(type) >= 0", "feature_list_dense_types: list(type) >= 0",
           "feature_list_sparse_types: list(type) >= 0", "feature_list_ragged_value_types: list(type) >= 0",
           "feature_list_ragged_split_types: list(type) >= 0", "context_dense_shapes: list(shape) >= 0",
           "feature_list_dense_shapes: list(shape) >= 0"],
    shape_fn=_shape_fn)
ParseSequenceExampleV2.not_differentiable()


def _steps(feature_list: Any, key: str, kind: str, word: str, where: _Where, index: int) -> list:
    """The value lists of a feature list's steps, each checked to be of list type `kind`."""
    steps = []
    for feature in feature_list.feature:
        actual = feature.WhichOneof("kind")
        if actual is None:
            steps.append(())
            continue
        if actual != kind:
            raise invalid(f"Name: {where.name(index)}, Feature list: {key}, Index: {index}.  Data types don't "
                          f"match. Expected type: {word}")
        steps.append(getattr(feature, actual).value)
    return steps


class _DenseList:
    def __init__(self, key: str, dtype: _dtypes.DType, shape: tuple, assumed_empty: bool) -> None:
        self.key, self.dtype, self.shape, self.assumed_empty = key, dtype, tuple(shape), assumed_empty
        self.kind, self.word = _LIST_OF[dtype.name], _TYPE_WORD[dtype.name]
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.shape_text = "[" + ",".join(str(d) for d in self.shape) + "]"

    def steps(self, feature_lists: Any, where: _Where, index: int) -> list:
        feature_list = feature_lists.get(self.key)
        if feature_list is None:
            if not self.assumed_empty:
                raise invalid(f"Name: {where.name(index)}, Feature list '{self.key}' is required but could not "
                              f"be found.  Did you mean to include it in feature_list_dense_missing_assumed_empty "
                              f"or feature_list_dense_defaults?")
            return []
        steps = _steps(feature_list, self.key, self.kind, self.word, where, index)
        for values in steps:
            if len(values) != self.size:
                raise invalid(f"Name: {where.name(index)}, Key: {self.key}, Index: {index}.  Number of values != "
                              f"expected.  values size: {len(values)} but output shape: {self.shape_text}")
        return steps

    def outputs(self, records: list, single: bool) -> tuple:
        lengths = np.array([len(steps) for steps in records], dtype=np.int64)
        longest = int(lengths.max()) if len(records) else 0
        np_type = object if self.dtype is _dtypes.string else self.dtype.as_numpy_dtype
        out = np.empty((len(records), longest * self.size), dtype=np_type)
        out[...] = b"" if np_type is object else 0
        for i, steps in enumerate(records):
            flat = [v for step in steps for v in step]
            if flat:
                out[i, :len(flat)] = to_object_array(flat, (len(flat),)) if np_type is object else flat
        out = out.reshape((len(records), longest) + self.shape)
        return (out[0], lengths[0]) if single else (out, lengths)


def _sparse_list_output(records: list, dtype: _dtypes.DType, single: bool) -> tuple:
    """[record, step, position] indices (no record column for one record), values, dense shape."""
    index_rows, flat = [], []
    longest_steps = longest_values = 0
    for r, steps in enumerate(records):
        longest_steps = max(longest_steps, len(steps))
        for t, values in enumerate(steps):
            longest_values = max(longest_values, len(values))
            index_rows.extend((r, t, j) for j in range(len(values)))
            flat.extend(values)
    indices = np.array(index_rows, dtype=np.int64).reshape(len(flat), 3)
    values = (to_object_array(flat, (len(flat),)) if dtype is _dtypes.string
              else np.asarray(flat, dtype=dtype.as_numpy_dtype).reshape(len(flat)))
    if single:
        return indices[:, 1:], values, np.array([longest_steps, longest_values], np.int64)
    return indices, values, np.array([len(records), longest_steps, longest_values], np.int64)


@ParseSequenceExampleV2.kernel()
def _parse_sequence_example_kernel(ctx: KernelContext) -> Callable:
    if ctx.attr("context_ragged_value_types") or ctx.attr("feature_list_ragged_value_types"):
        raise invalid("ParseSequenceExampleV2: ragged features are not supported by tensorweave")
    context_sparse_types, context_dense_types = list(ctx.attr("context_sparse_types")), list(ctx.attr("Tcontext_dense"))
    context_shapes = [s.as_tuple_or_none() for s in ctx.attr("context_dense_shapes")]
    list_sparse_types, list_dense_types = list(ctx.attr("feature_list_sparse_types")), list(
        ctx.attr("feature_list_dense_types"))
    list_shapes = [s.as_tuple_or_none() for s in ctx.attr("feature_list_dense_shapes")]
    context_set = keyed_cache(lambda sparse, dense: FeatureSet(sparse, context_sparse_types, dense,
                                                               context_dense_types, context_shapes))

    def build_lists(sparse: tuple, dense: tuple, empty: tuple) -> tuple:
        sparse_lists = [(k.decode("utf-8"), _LIST_OF[t.name], _TYPE_WORD[t.name], t)
                        for k, t in zip(sparse, list_sparse_types)]
        dense_lists = [_DenseList(k.decode("utf-8"), t, s, bool(e))
                       for k, t, s, e in zip(dense, list_dense_types, list_shapes, empty)]
        return sparse_lists, dense_lists

    lists = keyed_cache(build_lists)

    def compute(serialized: Any, debug_name: Any, context_sparse_keys: Any, context_dense_keys: Any,
                context_ragged_keys: Any, list_sparse_keys: Any, list_dense_keys: Any, list_ragged_keys: Any,
                assumed_empty: Any, *context_defaults: Any) -> Any:
        context = context_set(context_sparse_keys, context_dense_keys)
        sparse_lists, dense_lists = lists(list_sparse_keys, list_dense_keys, assumed_empty)
        single = serialized.ndim == 0
        where = _Where(False, [] if debug_name.size == 0 else debug_name.ravel().tolist())
        rows = context.start()
        sparse_rows: list = [[] for _ in sparse_lists]
        dense_rows: list = [[] for _ in dense_lists]
        for index, record in enumerate(records_of(serialized)):
            message = decode(SequenceExample, record, "example")
            context.gather(rows, message.context.feature, index, where)
            feature_lists = message.feature_lists.feature_list
            for out, (key, kind, word, _) in zip(sparse_rows, sparse_lists):
                feature_list = feature_lists.get(key)
                out.append([] if feature_list is None else _steps(feature_list, key, kind, word, where, index))
            for out, d in zip(dense_rows, dense_lists):
                out.append(d.steps(feature_lists, where, index))
        where.single = single
        result = context.outputs(rows, context_defaults, where)
        parts: list = [[], [], []]
        for out, (_, _, _, dtype) in zip(sparse_rows, sparse_lists):
            for part, value in zip(parts, _sparse_list_output(out, dtype, single)):
                part.append(value)
        dense_values, lengths = [], []
        for out, d in zip(dense_rows, dense_lists):
            value, length = d.outputs(out, single)
            dense_values.append(value)
            lengths.append(length)
        result += parts[0] + parts[1] + parts[2] + dense_values + lengths
        return tuple(result) if len(result) != 1 else result[0]

    return compute


def parse_sequence_example_op(serialized: Any, debug_name: Any, context: Any, feature_list: Any,
                              assumed_empty: list, context_defaults: list, name: Any = None) -> Any:
    """Applies ParseSequenceExampleV2; `context` and `feature_list` are the wrapper's parameter
    tables (keys, types, shapes)."""
    return apply_op(
        ParseSequenceExampleV2, name=name, serialized=serialized, debug_name=debug_name,
        context_sparse_keys=_keys(context.sparse_keys), context_dense_keys=_keys(context.dense_keys),
        context_ragged_keys=_keys([]), feature_list_sparse_keys=_keys(feature_list.sparse_keys),
        feature_list_dense_keys=_keys(feature_list.dense_keys), feature_list_ragged_keys=_keys([]),
        feature_list_dense_missing_assumed_empty=np.array(assumed_empty, dtype=bool).reshape(len(assumed_empty)),
        context_dense_defaults=context_defaults, Ncontext_sparse=len(context.sparse_keys),
        Nfeature_list_sparse=len(feature_list.sparse_keys), Nfeature_list_dense=len(feature_list.dense_keys),
        context_sparse_types=context.sparse_types, context_ragged_value_types=[], context_ragged_split_types=[],
        feature_list_dense_types=feature_list.dense_types, feature_list_sparse_types=feature_list.sparse_types,
        feature_list_ragged_value_types=[], feature_list_ragged_split_types=[],
        context_dense_shapes=context.dense_shapes, feature_list_dense_shapes=feature_list.dense_shapes)



