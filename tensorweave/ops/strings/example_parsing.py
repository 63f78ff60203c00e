"""tf.io.parse_example and parse_single_example with their feature configurations
(FixedLenFeature, VarLenFeature, SparseFeature, FixedLenSequenceFeature), on the ParseExampleV2
op (example_ops). A tier-2 module: SparseFeature's tensors are built with the sparse family's
sparse_merge, as TF's parsing_config does."""
from __future__ import annotations

import collections
import re
from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops.array import reshape
from tensorweave.ops.sparse.sparse_impl import sparse_merge
from tensorweave.ops.strings.example_ops import parse_example_op
from tensorweave.ops.strings.sequence_example_ops import parse_sequence_example_op

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature", "parse_example",
           "parse_single_example", "parse_sequence_example", "parse_single_sequence_example"]


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values per record, parsed into a SparseTensor."""


class SparseFeature(collections.namedtuple("SparseFeature",
                                           ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor built from an int64 index feature (or several, one per dimension) and a
    value feature of the same length: values[i] sits at indices[i] in a row of `size`."""

    def __new__(cls, index_key: Any, value_key: str, dtype: Any, size: Any,
                already_sorted: bool = False) -> "SparseFeature":
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature with exactly `shape`'s number of values, parsed into a dense tensor;
    `default_value` (of `shape`) stands in where it is missing, else missing is an error."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> "FixedLenFeature":
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature holding any number of `shape` blocks, parsed into a dense [batch, blocks, *shape]
    tensor padded with `default_value` (a scalar; zero or "" when None)."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False,
                default_value: Any = None) -> "FixedLenSequenceFeature":
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_EXAMPLE_TYPES = (VarLenFeature, SparseFeature, FixedLenFeature, FixedLenSequenceFeature)


class _Params:
    """The op's arguments for a features dict, checked as TF's _ParseOpParams checks them."""

    def __init__(self, features: Optional[dict], types: tuple = _EXAMPLE_TYPES, steps: bool = False) -> None:
        self.steps = steps  # feature lists: a FixedLenSequenceFeature's shape is its step's
        self.allow_missing: dict = {}
        self.sparse_keys: list[str] = []
        self.sparse_types: list = []
        self.dense_keys: list[str] = []
        self.dense_types: list = []
        self.dense_shapes: list[TensorShape] = []
        self.defaults: dict = {}
        for key in sorted(features or {}):  # sorted, as TF does, so the graph is deterministic
            if not isinstance(features[key], types):
                raise ValueError(f"Unsupported {type(features[key]).__name__} {features[key]} for key '{key}'")
            self._add(key, features[key])
        dense, sparse = set(self.dense_keys), set(self.sparse_keys)
        if not dense.isdisjoint(sparse):
            raise ValueError(f"Dense and sparse keys must not intersect; dense_keys: {self.dense_keys}, "
                             f"sparse_keys: {self.sparse_keys}, intersection: {dense & sparse}")

    def _add(self, key: str, feature: Any) -> None:
        if not isinstance(feature, (VarLenFeature, SparseFeature, FixedLenFeature, FixedLenSequenceFeature)):
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
        if not feature.dtype:
            raise ValueError(f"Missing type for feature {key}. Received feature={feature}.")
        if isinstance(feature, VarLenFeature):
            self._add_sparse(key, _dtypes.as_dtype(feature.dtype))
        elif isinstance(feature, SparseFeature):
            if not feature.index_key:
                raise ValueError(f"Missing index_key for SparseFeature {feature}.")
            if not feature.value_key:
                raise ValueError(f"Missing value_key for SparseFeature {feature}.")
            index_keys = [feature.index_key] if isinstance(feature.index_key, str) else feature.index_key
            for index_key in sorted(index_keys):
                self._add_sparse(index_key, _dtypes.int64)
            self._add_sparse(feature.value_key, _dtypes.as_dtype(feature.dtype))
        else:
            self._add_dense(key, feature)

    def _add_sparse(self, key: str, dtype: _dtypes.DType) -> None:
        if key in self.sparse_keys:
            original = self.sparse_types[self.sparse_keys.index(key)]
            if original != dtype:
                raise ValueError(f"Conflicting type {original.name} vs {dtype.name} for feature {key}.")
            return
        self.sparse_keys.append(key)
        self.sparse_types.append(dtype)

    def _add_dense(self, key: str, feature: Any) -> None:
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        shape = as_shape(feature.shape)
        if isinstance(feature, FixedLenSequenceFeature):
            self.allow_missing[key] = feature.allow_missing
            if self.steps and feature.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            if not self.steps:
                shape = TensorShape([None]).concatenate(shape)
        else:
            if shape.ndims and shape.dims[0].value is None:
                raise ValueError(f"First dimension of shape for feature {key} unknown. Consider using "
                                 f"FixedLenSequenceFeature. Received feature={feature}.")
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known but received "
                                 f"{feature.shape!s}.")
        self.dense_keys.append(key)
        self.dense_types.append(_dtypes.as_dtype(feature.dtype))
        self.dense_shapes.append(shape)
        self.defaults[key] = feature.default_value

    def dense_default(self, key: str, shape: TensorShape, dtype: _dtypes.DType) -> Any:
        """The op's default input for a dense feature: a scalar padding value for a sequence
        feature, else the default of the feature's shape, or an empty tensor (required)."""
        value = self.defaults.get(key)
        if shape.ndims and shape.dims[0].value is None:
            if value is None:
                return convert_to_tensor("" if dtype is _dtypes.string else 0, dtype=dtype)
            padding = convert_to_tensor(value, dtype=dtype, name="padding_" + _safe(key))
            return reshape(padding, [])
        if value is None:
            return convert_to_tensor([], dtype=dtype)
        if hasattr(value, "op"):
            return value
        return reshape(convert_to_tensor(value, dtype=dtype, name="key_" + _safe(key)), shape.as_list())


def _safe(key: str) -> str:
    return re.sub("[^A-Za-z0-9_.\\-/]", "_", key)


def _check_features(features: Any) -> None:
    for key, feature in (features or {}).items():
        if isinstance(feature, FixedLenSequenceFeature) and not feature.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")


def _parse(serialized: Any, features: dict, example_names: Any, name: Optional[str]) -> dict:
    _check_features(features)
    params = _Params(features)
    if not params.sparse_keys and not params.dense_keys:
        raise ValueError("Must provide at least one feature key.")
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names, dtype=_dtypes.string)
        defaults = [params.dense_default(k, s, t)
                    for k, s, t in zip(params.dense_keys, params.dense_shapes, params.dense_types)]
        outputs = parse_example_op(serialized, names, params.sparse_keys, params.sparse_types,
                                   params.dense_keys, params.dense_types, defaults, params.dense_shapes,
                                   name=name)
        indices, values, shapes, dense = outputs[:4]
        tensors: dict = {k: SparseTensor(i, v, s)
                         for k, i, v, s in zip(params.sparse_keys, indices, values, shapes)}
        tensors.update(zip(params.dense_keys, dense))
    return _sparse_features(features, tensors)


def _sparse_features(features: dict, tensors: dict) -> dict:
    """The parsed dict with each SparseFeature built from its index and value tensors."""
    result = dict(tensors)
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, SparseFeature):
            if isinstance(feature.index_key, str):
                ids: Any = tensors[feature.index_key]
            else:
                ids = [tensors[k] for k in feature.index_key]
            result[key] = sparse_merge(ids, tensors[feature.value_key], vocab_size=feature.size,
                                       already_sorted=feature.already_sorted)
    for key in list(result):  # index/value keys that are not features themselves are dropped
        if key not in features:
            del result[key]
    return result


def parse_example(serialized: Any, features: Any, name: Optional[str] = None, example_names: Any = None) -> dict:
    """Parses a vector of serialized tf.train.Example protos into a dict mapping each key of
    `features` to a Tensor (FixedLenFeature, FixedLenSequenceFeature) or SparseTensor
    (VarLenFeature, SparseFeature), batched along a first dimension."""
    return _parse(serialized, features, example_names, name)


def parse_single_example(serialized: Any, features: Any, name: Optional[str] = None,
                         example_names: Any = None) -> dict:
    """parse_example for one serialized Example (a scalar): no batch dimension."""
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError(f"Input serialized must be a scalar; got shape {serialized.shape}")
        return _parse(serialized, features, example_names, name)


def _sequence_outputs(serialized: Any, context_features: Any, sequence_features: Any, debug_name: Any,
                      name: Optional[str]) -> tuple:
    context = _Params(context_features, (VarLenFeature, FixedLenFeature))
    feature_list = _Params(sequence_features, (VarLenFeature, FixedLenSequenceFeature), steps=True)
    if not (context.sparse_keys or context.dense_keys or feature_list.sparse_keys or feature_list.dense_keys):
        raise ValueError("Must provide at least one feature key.")
    with name_scope(name, "ParseSequenceExample", [serialized]):
        serialized = convert_to_tensor(serialized, name="serialized")
        names = convert_to_tensor([] if debug_name is None else debug_name, dtype=_dtypes.string)
        defaults = [context.dense_default(k, s, t)
                    for k, s, t in zip(context.dense_keys, context.dense_shapes, context.dense_types)]
        assumed_empty = [feature_list.allow_missing[k] for k in feature_list.dense_keys]
        outputs = parse_sequence_example_op(serialized, names, context, feature_list, assumed_empty, defaults,
                                            name=name)
    (c_indices, c_values, c_shapes, c_dense, _, _, l_indices, l_values, l_shapes, l_dense, lengths,
     *_) = outputs
    context_out: dict = {k: SparseTensor(i, v, s)
                         for k, i, v, s in zip(context.sparse_keys, c_indices, c_values, c_shapes)}
    context_out.update(zip(context.dense_keys, c_dense))
    list_out: dict = {k: SparseTensor(i, v, s)
                      for k, i, v, s in zip(feature_list.sparse_keys, l_indices, l_values, l_shapes)}
    list_out.update(zip(feature_list.dense_keys, l_dense))
    return context_out, list_out, dict(zip(feature_list.dense_keys, lengths))


def parse_sequence_example(serialized: Any, context_features: Any = None, sequence_features: Any = None,
                           example_names: Any = None, name: Optional[str] = None) -> tuple:
    """Parses a vector of serialized tf.train.SequenceExample protos: returns the context's
    features (FixedLenFeature, VarLenFeature), the feature lists' features
    (FixedLenSequenceFeature as [batch, steps, *shape] zero-padded, VarLenFeature as a rank-3
    SparseTensor), and each dense feature list's number of steps per record."""
    if not (context_features or sequence_features):
        raise ValueError("Both `context_features` and `sequence_features` argument are None, but at least one "
                         "should have values.")
    with name_scope(name, "ParseSequenceExample", [serialized, example_names]):
        return _sequence_outputs(serialized, context_features, sequence_features, example_names, name)


def parse_single_sequence_example(serialized: Any, context_features: Any = None, sequence_features: Any = None,
                                  example_name: Any = None, name: Optional[str] = None) -> tuple:
    """parse_sequence_example for one serialized SequenceExample (a scalar): the context's and
    the feature lists' features, with no batch dimension."""
    if not (context_features or sequence_features):
        raise ValueError("Both context_features and sequence_features are None, but at least one should have "
                         "values.")
    with name_scope(name, "ParseSingleSequenceExample", [serialized, example_name]):
        serialized = convert_to_tensor(serialized, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError("Input serialized must be a scalar")
        return _sequence_outputs(serialized, context_features, sequence_features, example_name, name)[:2]
