"""`tf.data.Dataset` (TF 1.15's DatasetV1): a dataset is a Python object that knows its element
structure (nested dtypes, shapes, classes) and how to build its dataset op; its variant tensor
is built in the graph that asks for it (once per graph), so a one-shot iterator can build the
whole pipeline again inside its dataset factory function."""
from __future__ import annotations

import abc
import itertools
import threading
import weakref
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import function as _function
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.array.shaping import size
from tensorweave.ops.data import dataset_ops as ops
from tensorweave.ops.data import grouping_ops, options_ops
from tensorweave.ops.io.file_io import matching_files
from tensorweave.ops.math import cast
from tensorweave.ops.math.elementwise import maximum
from tensorweave.ops.script.py_func import py_func
from tensorweave.data.iterator_ops import (EagerIterator, Iterator, _shapes_like, make_initializable_iterator,
                                           make_one_shot_iterator)
from tensorweave.data import structure, vectorize
from tensorweave.data.structured_function import StructuredFunction
from tensorweave.data.dataset_spec import DatasetSpec
from tensorweave.data.options import Options, applied_optimizations

AUTOTUNE = -1


def _as_int64(value: Any, name: str) -> Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name=name)


class Dataset(structure.ElementStructure, abc.ABC):
    """A potentially large set of elements (TF1's tf.data.Dataset)."""

    def __init__(self, types: Any, shapes: Any, inputs: tuple = (), classes: Any = None) -> None:
        self._types = types
        self._shapes = shapes
        self._inputs = inputs
        self._classes = classes  # SparseTensor or Tensor per leaf; None: all Tensor (data/structure.py)
        self._variants: "weakref.WeakKeyDictionary[Any, Tensor]" = weakref.WeakKeyDictionary()

    # -- structure (output_types/shapes/classes: structure.ElementStructure) ---------------------
    def _flat(self) -> dict:
        return structure.flat_attrs(self._types, self._shapes, self._classes)

    # -- the graph value ---------------------------------------------------------------------------
    def _as_variant_tensor(self) -> Tensor:
        """The dataset op of this dataset in the default graph (built once per graph)."""
        graph = _graph.get_default_graph()
        tensor = self._variants.get(graph)
        if tensor is None:
            tensor = self._variants[graph] = self._build()
        return tensor

    @property
    def _variant_tensor(self) -> Tensor:
        return self._as_variant_tensor()

    @abc.abstractmethod
    def _build(self) -> Tensor:
        """The dataset's variant tensor in the default graph (each dataset kind makes its op)."""

    # -- sources -----------------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors: Any) -> "Dataset":
        return _TensorDataset(tensors, slices=False)

    @staticmethod
    def from_tensor_slices(tensors: Any) -> "Dataset":
        return _TensorDataset(tensors, slices=True)

    @staticmethod
    def range(*args: Any) -> "Dataset":
        return _RangeDataset(*args)

    @staticmethod
    def from_generator(generator: Callable[..., Any], output_types: Any, output_shapes: Any = None,
                       args: Any = None) -> "Dataset":
        return _from_generator(generator, output_types, output_shapes, args)

    @staticmethod
    def zip(datasets: Any) -> "Dataset":
        return _ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: Optional[bool] = None, seed: Optional[int] = None) -> "Dataset":
        """The files matching `file_pattern` (a pattern or a list of them), shuffled by default."""
        files = matching_files(file_pattern)
        names = _TensorDataset(files, slices=True)
        if shuffle is None or shuffle:  # the buffer holds every name (at least 1, as TF's)
            return names.shuffle(maximum(size(files, out_type=_dtypes.int64), 1), seed=seed)
        return names

    # -- transformations ---------------------------------------------------------------------------
    def concatenate(self, dataset: "Dataset") -> "Dataset":
        return _ConcatenateDataset(self, dataset)

    def map(self, map_func: Callable[..., Any], num_parallel_calls: Optional[int] = None) -> "Dataset":
        return _MapDataset(self, map_func, num_parallel_calls)

    def flat_map(self, map_func: Callable[..., Any]) -> "Dataset":
        return _FlatMapDataset(self, map_func, None, None, None)

    def interleave(self, map_func: Callable[..., Any], cycle_length: Any = AUTOTUNE, block_length: Any = 1,
                   num_parallel_calls: Optional[int] = None) -> "Dataset":
        return _FlatMapDataset(self, map_func, cycle_length, block_length, num_parallel_calls)

    def filter(self, predicate: Callable[..., Any]) -> "Dataset":
        return _FilterDataset(self, predicate)

    def batch(self, batch_size: Any, drop_remainder: bool = False) -> "Dataset":
        return _BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: Any, padded_shapes: Any, padding_values: Any = None,
                     drop_remainder: bool = False) -> "Dataset":
        return _PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def repeat(self, count: Any = None) -> "Dataset":
        return _Unary(self, ops.RepeatDataset, self._types, self._shapes,
                      count=_as_int64(-1 if count is None else count, "count"))

    def take(self, count: Any) -> "Dataset":
        return _Unary(self, ops.TakeDataset, self._types, self._shapes, count=_as_int64(count, "count"))

    def skip(self, count: Any) -> "Dataset":
        return _Unary(self, ops.SkipDataset, self._types, self._shapes, count=_as_int64(count, "count"))

    def shard(self, num_shards: Any, index: Any) -> "Dataset":
        return _Unary(self, ops.ShardDataset, self._types, self._shapes,
                      num_shards=_as_int64(num_shards, "num_shards"), index=_as_int64(index, "index"))

    def shuffle(self, buffer_size: Any, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None) -> "Dataset":
        seed1, seed2 = random_seed.get_seed(seed)
        return _Unary(self, ops.ShuffleDataset, self._types, self._shapes,
                      buffer_size=_as_int64(buffer_size, "buffer_size"),
                      seed=_as_int64(seed1 or 0, "seed"), seed2=_as_int64(seed2 or 0, "seed2"),
                      reshuffle_each_iteration=True if reshuffle_each_iteration is None
                      else bool(reshuffle_each_iteration))

    def prefetch(self, buffer_size: Any) -> "Dataset":
        return _Unary(self, ops.PrefetchDataset, self._types, self._shapes,
                      buffer_size=_as_int64(buffer_size, "buffer_size"))

    def cache(self, filename: Any = "") -> "Dataset":
        return _Unary(self, ops.CacheDataset, self._types, self._shapes,
                      filename=convert_to_tensor(filename, dtype=_dtypes.string, name="filename"))

    def unbatch(self) -> "Dataset":
        shapes = nest.pack_sequence_as(self._shapes, [TensorShape(s)[1:] if TensorShape(s).ndims else unknown_shape()
                                                      for s in nest.flatten(self._shapes)])
        rows: Dataset = self
        if structure.has_sparse(self._classes):
            # TF's normalize_to_dense: each batch of sparse boxes is unboxed and boxed again by
            # rows, so every row gets the batch's dense shape (the largest of the batched ones)
            rows = _MapDataset(self, lambda *x: x[0] if len(x) == 1 else x, None, batched_outputs=True)
            rows._types, rows._shapes, rows._classes = self._types, self._shapes, None
        unbatched = _Unary(rows, ops.UnbatchDataset, self._types, shapes)
        unbatched._classes = self._classes
        return unbatched

    def window(self, size: Any, shift: Any = None, stride: Any = 1, drop_remainder: Any = False) -> "Dataset":
        """Windows of `size` elements (each component a Dataset), one every `shift` elements
        (default `size`), taking every `stride`-th input element."""
        return _WindowDataset(self, size, size if shift is None else shift, stride, drop_remainder)

    # -- options -----------------------------------------------------------------------------------
    def with_options(self, options: Options) -> "Dataset":
        """This dataset with `options` (merged with those of its inputs; ValueError on a conflict)."""
        return _OptionsDataset(self, options)

    def options(self) -> Options:
        """The options of this dataset: those of its inputs, merged."""
        options = Options()
        for dataset in self._input_datasets():
            options = options.merge(dataset.options())
        return options

    def _input_datasets(self) -> list:
        found: list = []
        for value in vars(self).values():
            found.extend(d for d in nest.flatten(value) if isinstance(d, Dataset))
        return found

    def _apply_options(self) -> "Dataset":
        """This dataset with its options' effects (TF applies them when an iterator is made)."""
        options = self.options()
        dataset: Dataset = self
        threading_options = options.experimental_threading
        if threading_options.max_intra_op_parallelism is not None:
            dataset = _Unary(dataset, options_ops.MaxIntraOpParallelismDataset, self._types, self._shapes,
                             max_intra_op_parallelism=_as_int64(threading_options.max_intra_op_parallelism,
                                                                "max_intra_op_parallelism"))
        if threading_options.private_threadpool_size is not None:
            dataset = _Unary(dataset, options_ops.PrivateThreadPoolDataset, self._types, self._shapes,
                             num_threads=_as_int64(threading_options.private_threadpool_size, "num_threads"))
        rewrites = applied_optimizations(options)
        if rewrites:
            dataset = _Unary(dataset, options_ops.OptimizeDataset, self._types, self._shapes,
                             optimizations=convert_to_tensor(rewrites, dtype=_dtypes.string, name="optimizations"))
        return dataset

    def reduce(self, initial_state: Any, reduce_func: Callable[..., Any]) -> Any:
        """`reduce_func(state, element)` folded over the elements from `initial_state`."""
        state = _tensors_structure(initial_state if isinstance(initial_state, (tuple, dict))
                                   else initial_state)
        flat_state = nest.flatten(state)
        types = (nest.pack_sequence_as(state, [t.dtype for t in flat_state]), self._types)
        shapes = (nest.pack_sequence_as(state, [unknown_shape() for _ in flat_state]), self._shapes)
        classes = None if self._classes is None else \
            (nest.pack_sequence_as(state, [Tensor] * len(flat_state)), self._classes)
        fn = StructuredFunction(lambda st, el: reduce_func(st, el), "Dataset_reduce", types, shapes, classes)
        out_types = nest.flatten(fn.output_types)
        if out_types != [t.dtype for t in flat_state]:
            raise TypeError(f"The element types for the new state must match the initial state: expected "
                            f"{[t.dtype for t in flat_state]}, got {out_types}.")
        fn.add_to_graph(_graph.get_default_graph())
        result = apply_op(ops.ReduceDataset, input_dataset=self._as_variant_tensor(), initial_state=flat_state,
                          other_arguments=fn.captured, f=_function.function_attr_value(fn.name),
                          output_types=out_types,
                          output_shapes=[TensorShape(s) for s in nest.flatten(fn.output_shapes)])
        return nest.pack_sequence_as(state, result if isinstance(result, list) else [result])

    def apply(self, transformation_func: Callable[["Dataset"], "Dataset"]) -> "Dataset":
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return result

    # -- iterators ---------------------------------------------------------------------------------
    def make_one_shot_iterator(self) -> Iterator:
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: Optional[str] = None) -> Iterator:
        return make_initializable_iterator(self, shared_name)

    def __iter__(self) -> Any:
        if not _graph.get_default_graph().executes_eagerly:
            raise RuntimeError("dataset.__iter__() is only supported when eager execution is enabled.")
        return EagerIterator(self)


DatasetV1 = Dataset


def _tensors_structure(tensors: Any) -> Any:
    """The element as tensors (lists are converted whole: TF treats a list as one tensor;
    SparseTensors stay sparse)."""
    if isinstance(tensors, SparseTensorValue):
        return SparseTensor.from_value(tensors)
    if isinstance(tensors, SparseTensor):
        return tensors
    if isinstance(tensors, dict):
        return type(tensors)((k, _tensors_structure(v)) for k, v in tensors.items())
    if isinstance(tensors, tuple):
        items = [_tensors_structure(v) for v in tensors]
        return type(tensors)(*items) if hasattr(tensors, "_fields") else tuple(items)
    return convert_to_tensor(tensors, name="component")


class _TensorDataset(Dataset):
    def __init__(self, tensors: Any, slices: bool) -> None:
        self._tensors = _tensors_structure(tensors)
        self._slices = slices
        flat = nest.flatten(self._tensors)
        shapes = [t.shape[1:] if slices and t.shape.ndims else t.shape for t in flat]
        if slices:
            for t in flat:
                if t.shape.ndims == 0:
                    raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got {_name(t)}")
            sizes = {t.shape.as_list()[0] for t in flat if t.shape.ndims} - {None}
            if len(sizes) > 1:
                raise ValueError(f"Dimensions of the components must be equal, got sizes {sorted(sizes)}")
        super().__init__(nest.pack_sequence_as(self._tensors, [t.dtype for t in flat]),
                         nest.pack_sequence_as(self._tensors, shapes), classes=structure.classes_of(self._tensors))

    def _build(self) -> Tensor:
        op = ops.TensorSliceDataset if self._slices else ops.TensorDataset
        return apply_op(op, components=[structure.to_flat(t, self._slices) for t in nest.flatten(self._tensors)],
                        output_shapes=self._flat()["output_shapes"])


def _name(t: Any) -> str:
    return t.values.name if isinstance(t, SparseTensor) else t.name


class _RangeDataset(Dataset):
    def __init__(self, *args: Any) -> None:
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to RangeDataset: {args!r}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1) if len(args) == 2 else args
        self._args = [_as_int64(start, "start"), _as_int64(stop, "stop"), _as_int64(step, "step")]
        super().__init__(_dtypes.int64, TensorShape([]))

    def _build(self) -> Tensor:
        return apply_op(ops.RangeDataset, start=self._args[0], stop=self._args[1], step=self._args[2],
                        **self._flat())


class _ZipDataset(Dataset):
    def __init__(self, datasets: Any) -> None:
        for d in nest.flatten(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"The argument to `Dataset.zip()` must be a nested structure of Dataset objects, "
                                f"got {type(d).__name__}")
        self._datasets = datasets
        flat = nest.flatten(datasets)
        classes = None
        if any(structure.has_sparse(d._classes) for d in flat):
            classes = nest.pack_sequence_as(datasets, [d.output_classes for d in flat])
        super().__init__(nest.pack_sequence_as(datasets, [d.output_types for d in flat]),
                         nest.pack_sequence_as(datasets, [d.output_shapes for d in flat]), classes=classes)

    def _build(self) -> Tensor:
        return apply_op(ops.ZipDataset, input_datasets=[d._as_variant_tensor() for d in nest.flatten(self._datasets)],
                        **self._flat())


class _ConcatenateDataset(Dataset):
    def __init__(self, first: Dataset, second: Dataset) -> None:
        if first.output_types != second.output_types:
            raise TypeError(f"Two datasets to concatenate have different types {first.output_types} and "
                            f"{second.output_types}")
        shapes = nest.pack_sequence_as(first.output_shapes, [
            TensorShape(a).most_specific_compatible_shape(TensorShape(b))
            for a, b in zip(nest.flatten(first.output_shapes), nest.flatten(second.output_shapes))])
        if first.output_classes != second.output_classes:
            raise TypeError(f"Two datasets to concatenate have different classes {first.output_classes} and "
                            f"{second.output_classes}")
        self._parts = (first, second)
        super().__init__(first.output_types, shapes, classes=first._classes)

    def _build(self) -> Tensor:
        return apply_op(ops.ConcatenateDataset, input_dataset=self._parts[0]._as_variant_tensor(),
                        another_dataset=self._parts[1]._as_variant_tensor(), **self._flat())


class _Unary(Dataset):
    """A transformation with one input dataset and tensor arguments (repeat, take, ...)."""

    def __init__(self, inner: Dataset, op: Any, types: Any, shapes: Any, **args: Any) -> None:
        self._inner, self._op = inner, op
        self._args = {k: v for k, v in args.items() if isinstance(v, Tensor)}
        self._attrs = {k: v for k, v in args.items() if not isinstance(v, Tensor)}
        super().__init__(types, shapes, classes=inner._classes)

    def _build(self) -> Tensor:
        return apply_op(self._op, input_dataset=self._inner._as_variant_tensor(), **self._args, **self._attrs,
                        **self._flat())


class _MapDataset(Dataset):
    def __init__(self, inner: Dataset, func: Callable[..., Any], num_parallel_calls: Optional[int],
                 batched_outputs: bool = False) -> None:
        self._inner = inner
        self._fn = StructuredFunction(func, "Dataset_map", inner.output_types, inner.output_shapes, inner._classes,
                                      batched_outputs)
        self._parallel = num_parallel_calls
        self._batched: Any = None  # the function over chunks of elements (data/vectorize.py), False: none
        super().__init__(self._fn.output_types, self._fn.output_shapes, classes=self._fn.output_classes)

    def _build(self) -> Tensor:
        graph = _graph.get_default_graph()
        self._fn.add_to_graph(graph)
        if self._batched is None:
            self._batched = vectorize.batched_function(self._fn, len(nest.flatten(self._inner.output_types))) \
                or False
        if self._batched:
            _function.add_function(graph, self._batched)
        common = dict(input_dataset=self._inner._as_variant_tensor(), other_arguments=self._fn.captured,
                      f=_function.function_attr_value(self._fn.name), **self._flat())
        if self._parallel is None:
            return apply_op(ops.MapDataset, **common)
        return apply_op(ops.ParallelMapDataset, num_parallel_calls=convert_to_tensor(
            self._parallel, dtype=_dtypes.int32, name="num_parallel_calls"), **common)


class _FlatMapDataset(Dataset):
    def __init__(self, inner: Dataset, func: Callable[..., Any], cycle_length: Any, block_length: Any,
                 num_parallel_calls: Any) -> None:
        self._inner = inner
        self._fn = StructuredFunction(func, "Dataset_flat_map" if cycle_length is None else "Dataset_interleave",
                                      inner.output_types, inner.output_shapes, inner._classes)
        returned = self._fn.returned_dataset
        if returned is None:
            raise TypeError("`map_func` must return a `Dataset` object.")
        self._lengths = None if cycle_length is None else (_as_int64(cycle_length, "cycle_length"),
                                                           _as_int64(block_length, "block_length"))
        self._parallel = num_parallel_calls
        super().__init__(returned.output_types, returned.output_shapes, classes=returned._classes)

    def _build(self) -> Tensor:
        self._fn.add_to_graph(_graph.get_default_graph())
        common = dict(input_dataset=self._inner._as_variant_tensor(), other_arguments=self._fn.captured,
                      f=_function.function_attr_value(self._fn.name), **self._flat())
        if self._lengths is None:
            return apply_op(ops.FlatMapDataset, **common)
        if self._parallel is None:
            return apply_op(ops.InterleaveDataset, cycle_length=self._lengths[0], block_length=self._lengths[1],
                            **common)
        return apply_op(ops.ParallelInterleaveDatasetV2, cycle_length=self._lengths[0],
                        block_length=self._lengths[1],
                        num_parallel_calls=_as_int64(self._parallel, "num_parallel_calls"), **common)


class _FilterDataset(Dataset):
    def __init__(self, inner: Dataset, predicate: Callable[..., Any]) -> None:
        self._inner = inner
        self._fn = StructuredFunction(predicate, "Dataset_filter", inner.output_types, inner.output_shapes,
                                      inner._classes)
        out = nest.flatten(self._fn.output_types)
        if len(out) != 1 or out[0] != _dtypes.bool or not TensorShape(nest.flatten(self._fn.output_shapes)[0]) \
                .is_compatible_with(TensorShape([])):
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        super().__init__(inner.output_types, inner.output_shapes, classes=inner._classes)

    def _build(self) -> Tensor:
        self._fn.add_to_graph(_graph.get_default_graph())
        return apply_op(ops.FilterDataset, input_dataset=self._inner._as_variant_tensor(),
                        other_arguments=self._fn.captured,
                        predicate=_function.function_attr_value(self._fn.name), **self._flat())


class _GeneratorState:
    """The generators of a from_generator dataset, one per iteration, by id (as TF keeps them)."""

    def __init__(self, generator: Callable[..., Any]) -> None:
        self._generator = generator
        self._iterators: dict[int, Any] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def start(self, *args: Any) -> np.int64:
        with self._lock:
            key = next(self._ids)
            self._iterators[key] = iter(self._generator(*[a.item() if isinstance(a, np.ndarray) and a.ndim == 0
                                                          else a for a in args]))
        return np.int64(key)

    def next_of(self, key: Any) -> Any:
        it = self._iterators[int(key)]
        try:
            return next(it)
        except StopIteration:
            with self._lock:
                self._iterators.pop(int(key), None)
            raise errors.OutOfRangeError(None, None, "End of sequence") from None


def _flatten_up_to(structure: Any, value: Any) -> list:
    """`value`'s parts at the leaves of `structure` (a leaf's value may itself be a list)."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten_up_to(structure[k], value[k])]
    if isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            raise errors.InvalidArgumentError(None, None, f"`generator` yielded {value!r}, which does not match "
                                              f"the structure of `output_types` {structure!r}.")
        return [leaf for s, v in zip(structure, value) for leaf in _flatten_up_to(s, v)]
    return [value]


def _from_generator(generator: Callable[..., Any], output_types: Any, output_shapes: Any, args: Any) -> Dataset:
    """TF's construction: a dataset of one generator id per iteration, flat-mapped to the
    endless repetition of that id mapped through `next()` of its generator (a py_func), which
    ends the inner dataset by raising OutOfRangeError."""
    if not callable(generator):
        raise TypeError("`generator` must be callable.")
    types = nest.pack_sequence_as(output_types, [_dtypes.as_dtype(t) for t in nest.flatten(output_types)])
    shapes = _shapes_like(types, output_shapes)
    flat_types, flat_shapes = nest.flatten(types), nest.flatten(shapes)
    state = _GeneratorState(generator)
    arg_tensors = [convert_to_tensor(a, name="generator_arg") for a in (args or ())]

    def next_value(key: Any) -> list:
        value = state.next_of(key)
        flat = _flatten_up_to(types, value)
        if len(flat) != len(flat_types):
            raise errors.InvalidArgumentError(
                None, None, f"`generator` yielded an element of {len(flat)} components where {len(flat_types)} "
                "were expected.")
        out = []
        for v, t, shape in zip(flat, flat_types, flat_shapes):
            array = np.asarray(v, dtype=object if t == _dtypes.string else t.as_numpy_dtype)
            if not shape.is_compatible_with(TensorShape(array.shape)):
                raise errors.InvalidArgumentError(
                    None, None, f"`generator` yielded an element of shape {list(array.shape)} where an element of "
                    f"shape {shape} was expected.")
            out.append(array)
        return out

    def one_iteration(key: Tensor) -> Dataset:
        def element(k: Tensor) -> Any:
            values = py_func(next_value, [k], flat_types)
            values = values if isinstance(values, list) else [values]
            for v, shape in zip(values, flat_shapes):
                v.set_shape(shape)
            return nest.pack_sequence_as(types, values)
        return Dataset.from_tensors(key).repeat().map(element)

    ids = Dataset.from_tensors(np.int64(0)).map(lambda _: py_func(state.start, arg_tensors, _dtypes.int64))
    return ids.flat_map(one_iteration)


def _batch_dim(batch_size: Tensor, drop_remainder: Any) -> Any:
    size = tensor_util.constant_value(batch_size)
    drop = tensor_util.constant_value(drop_remainder)
    return int(size) if size is not None and drop is not None and bool(drop) else None


class _BatchDataset(Dataset):
    def __init__(self, inner: Dataset, batch_size: Any, drop_remainder: Any) -> None:
        self._inner = inner
        self._size = _as_int64(batch_size, "batch_size")
        self._drop = convert_to_tensor(drop_remainder, dtype=_dtypes.bool, name="drop_remainder")
        dim = _batch_dim(self._size, self._drop)
        shapes = nest.pack_sequence_as(inner.output_shapes, [TensorShape([dim]).concatenate(TensorShape(s))
                                                             for s in nest.flatten(inner.output_shapes)])
        super().__init__(inner.output_types, shapes, classes=inner._classes)

    def _build(self) -> Tensor:
        return apply_op(ops.BatchDatasetV2, input_dataset=self._inner._as_variant_tensor(), batch_size=self._size,
                        drop_remainder=self._drop, **self._flat())


def _padded_shape(shape: Any) -> TensorShape:
    if isinstance(shape, _Leaf):
        shape = shape.value
    if isinstance(shape, Tensor):
        value = tensor_util.constant_value(shape)
        if value is None:  # computed: its length is the rank
            length = shape.shape.as_list()[0] if shape.shape.ndims == 1 else None
            return TensorShape([None] * length) if length is not None else unknown_shape()
        return TensorShape([None if v < 0 else int(v) for v in value])
    return TensorShape(shape)


def _computed_shape(shape: Any) -> Optional[Tensor]:
    value = shape.value if isinstance(shape, _Leaf) else shape
    if isinstance(value, Tensor) and tensor_util.constant_value(value) is None:
        return value if value.dtype == _dtypes.int64 else cast(value, _dtypes.int64)
    return None


def _default_padding(dtype: Any) -> Any:
    return b"" if dtype == _dtypes.string else np.zeros((), dtype=dtype.as_numpy_dtype)


class _PaddedBatchDataset(Dataset):
    def __init__(self, inner: Dataset, batch_size: Any, padded_shapes: Any, padding_values: Any,
                 drop_remainder: Any) -> None:
        if structure.has_sparse(inner._classes):
            raise TypeError("Batching of padded sparse tensors is not currently supported")
        self._inner = inner
        self._size = _as_int64(batch_size, "batch_size")
        self._drop = convert_to_tensor(drop_remainder, dtype=_dtypes.bool, name="drop_remainder")
        types = nest.flatten(inner.output_types)
        flat_padded = nest.flatten(_shape_leaves(padded_shapes, inner.output_shapes))
        if len(flat_padded) != len(types):
            raise ValueError("padded_shapes must have the structure of the dataset's elements")
        self._padded = []
        # a padded shape computed in the graph (not a constant) is passed on as that tensor
        self._shape_tensors = [_computed_shape(s) for s in flat_padded]
        for s, elem in zip(flat_padded, nest.flatten(inner.output_shapes)):
            ps = _padded_shape(s)
            if not ps.is_compatible_with(TensorShape(elem)) and ps.ndims != TensorShape(elem).ndims:
                raise ValueError(f"The padded shape {ps} is not compatible with the corresponding input "
                                 f"component shape {elem}.")
            self._padded.append(ps)
        values = nest.flatten(padding_values) if padding_values is not None else [_default_padding(t) for t in types]
        self._values = [convert_to_tensor(v, dtype=t, name="padding_value") for v, t in zip(values, types)]
        dim = _batch_dim(self._size, self._drop)
        shapes = [TensorShape([dim]).concatenate(p) for p in self._padded]
        super().__init__(inner.output_types, nest.pack_sequence_as(inner.output_shapes, shapes))

    def _build(self) -> Tensor:
        shapes = [t if t is not None else
                  _as_int64([-1 if d is None else d for d in p.as_list()], "padded_shape") if p.ndims is not None
                  else _as_int64([], "padded_shape") for p, t in zip(self._padded, self._shape_tensors)]
        return apply_op(ops.PaddedBatchDatasetV2, input_dataset=self._inner._as_variant_tensor(),
                        batch_size=self._size, padded_shapes=shapes, padding_values=self._values,
                        drop_remainder=self._drop, output_shapes=nest.flatten(self._shapes))


def _shape_leaves(padded: Any, like: Any) -> Any:
    """padded_shapes with each shape a leaf (a shape is itself a list)."""
    if isinstance(like, dict):
        return {k: _shape_leaves(padded[k], like[k]) for k in like}
    if isinstance(like, tuple):
        return tuple(_shape_leaves(p, s) for p, s in zip(padded, like))
    return _Leaf(padded)


class _Leaf:
    """A padded shape kept whole by nest.flatten."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _ChooseDataset(Dataset):
    def __init__(self, datasets: list, choice_dataset: Dataset) -> None:
        if not datasets:
            raise ValueError("`datasets` must be a non-empty list of datasets.")
        if choice_dataset.output_types != _dtypes.int64 or not TensorShape(choice_dataset.output_shapes) \
                .is_compatible_with(TensorShape([])):
            raise TypeError("`choice_dataset` must be a dataset of scalar tf.int64 tensors.")
        first = datasets[0]
        for d in datasets[1:]:
            if d.output_types != first.output_types:
                raise TypeError(f"Datasets must have the same output types: {first.output_types} and "
                                f"{d.output_types}")
        shapes = [TensorShape(s) for s in nest.flatten(first.output_shapes)]
        for d in datasets[1:]:
            shapes = [a.most_specific_compatible_shape(TensorShape(b))
                      for a, b in zip(shapes, nest.flatten(d.output_shapes))]
        self._datasets, self._choice = list(datasets), choice_dataset
        super().__init__(first.output_types, nest.pack_sequence_as(first.output_shapes, shapes), classes=first._classes)

    def _build(self) -> Tensor:
        return apply_op(ops.DirectedInterleaveDataset, selector_input_dataset=self._choice._as_variant_tensor(),
                        data_input_datasets=[d._as_variant_tensor() for d in self._datasets], **self._flat())


class _RandomDataset(Dataset):
    def __init__(self, seed: Optional[int]) -> None:
        seed1, seed2 = random_seed.get_seed(seed)
        self._seeds = (_as_int64(seed1 or 0, "seed"), _as_int64(seed2 or 0, "seed2"))
        super().__init__(_dtypes.int64, TensorShape([]))

    def _build(self) -> Tensor:
        return apply_op(ops.RandomDataset, seed=self._seeds[0], seed2=self._seeds[1], **self._flat())


class _OptionsDataset(Dataset):
    """Its input with options set: the same dataset op, other options()."""

    def __init__(self, inner: Dataset, options: Options) -> None:
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a tf.data.Options, got {type(options).__name__}")
        self._inner = inner
        self._options = inner.options().merge(options)
        super().__init__(inner.output_types, inner.output_shapes, classes=inner._classes)

    def options(self) -> Options:
        return self._options

    def _build(self) -> Tensor:
        return self._inner._as_variant_tensor()


class _VariantDataset(Dataset):
    """A dataset given as a variant tensor (a window's component inside a function)."""

    def __init__(self, tensor: Tensor, types: Any, shapes: Any, classes: Any = None) -> None:
        self._tensor = tensor
        super().__init__(types, shapes, classes=classes)

    def _build(self) -> Tensor:
        if self._tensor.graph is not _graph.get_default_graph():
            raise ValueError(f"The dataset {self._tensor.name} belongs to another graph (a function's dataset "
                             "argument is used in that function only).")
        return self._tensor


DatasetSpec._dataset_class = _VariantDataset


class _WindowDataset(Dataset):
    def __init__(self, inner: Dataset, size: Any, shift: Any, stride: Any, drop_remainder: Any) -> None:
        self._inner = inner
        self._args = dict(size=_as_int64(size, "size"), shift=_as_int64(shift, "shift"),
                          stride=_as_int64(stride, "stride"),
                          drop_remainder=convert_to_tensor(drop_remainder, dtype=_dtypes.bool, name="drop_remainder"))
        # one dataset per component; a sparse component's window holds its boxed SparseTensors
        specs = [DatasetSpec(t, s, c if c is SparseTensor else None) for t, s, c in
                 zip(nest.flatten(inner.output_types), nest.flatten(inner.output_shapes),
                     structure.flat_classes(inner.output_types, inner._classes))]
        windows = nest.pack_sequence_as(inner.output_types, specs)
        super().__init__(windows, windows)

    def _build(self) -> Tensor:
        return apply_op(grouping_ops.WindowDataset, input_dataset=self._inner._as_variant_tensor(), **self._args,
                        **self._flat())


# ---------------------------------------------------------------------------------------------
# tf.compat.v1.data.get_output_*
# ---------------------------------------------------------------------------------------------
def get_output_types(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_classes
