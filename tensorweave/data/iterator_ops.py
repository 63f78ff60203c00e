"""`tf.data.Iterator` (TF 1.15's iterator_ops.Iterator): a handle to an iterator resource, its
initializer (MakeIterator) and `get_next` (IteratorGetNext), and the kinds TF1 makes: one-shot
(OneShotIterator over a dataset factory function), initializable, reinitializable
(`from_structure` + `make_initializer`) and feedable (`from_string_handle` + `string_handle`)."""
from __future__ import annotations

import itertools
from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import function as _function
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.data import iterator_ops as ops
from tensorweave.data import structure
from tensorweave.data.structured_function import factory_function

_ids = itertools.count()


def _flat(types: Any, shapes: Any, classes: Any = None) -> dict:
    return structure.flat_attrs(types, shapes, classes)


def _classes_like(types: Any, classes: Any) -> Any:
    """output_classes as a structure (None when every component is a Tensor)."""
    if classes is None:
        return None
    flat = nest.flatten(classes) if nest.is_sequence(classes) else [classes] * len(nest.flatten(types))
    if all(c is Tensor for c in flat):
        return None
    return nest.pack_sequence_as(types, flat)


class Iterator(structure.ElementStructure):
    """The state of iterating through a dataset (TF1's tf.data.Iterator)."""

    def __init__(self, iterator_resource: Tensor, initializer: Optional[Operation], output_types: Any,
                 output_shapes: Any, output_classes: Any = None) -> None:
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._types = output_types
        self._shapes = output_shapes
        self._classes = _classes_like(output_types, output_classes)
        self._get_next_calls = 0

    # -- kinds -------------------------------------------------------------------------------------
    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None, shared_name: Optional[str] = None,
                       output_classes: Any = None) -> "Iterator":
        types = nest.pack_sequence_as(output_types, [_dtypes.as_dtype(t) for t in nest.flatten(output_types)])
        shapes = _shapes_like(types, output_shapes)
        classes = _classes_like(types, output_classes)
        resource = apply_op(ops.IteratorV2, shared_name=shared_name or f"iterator_{next(_ids)}", container="",
                            name="Iterator", **_flat(types, shapes, classes))
        return Iterator(resource, None, types, shapes, classes)

    @staticmethod
    def from_string_handle(string_handle: Any, output_types: Any, output_shapes: Any = None,
                           output_classes: Any = None) -> "Iterator":
        types = nest.pack_sequence_as(output_types, [_dtypes.as_dtype(t) for t in nest.flatten(output_types)])
        shapes = _shapes_like(types, output_shapes)
        classes = _classes_like(types, output_classes)
        handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        resource = apply_op(ops.IteratorFromStringHandleV2, string_handle=handle, **_flat(types, shapes, classes))
        return Iterator(resource, None, types, shapes, classes)

    # -- use ---------------------------------------------------------------------------------------
    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Any, name: Optional[str] = None) -> Operation:
        """An op that (re)starts this iterator on `dataset` (of a compatible structure)."""
        nest.assert_same_structure(self._types, dataset.output_types)
        # classes first, as TF 1.15 (a window of SparseTensors differs from a dense one there)
        if self.output_classes != dataset.output_classes:
            raise TypeError(f"Expected output classes {self.output_classes!r} but got dataset with output classes "
                            f"{dataset.output_classes!r}.")
        for want, have in zip(nest.flatten(self._types), nest.flatten(dataset.output_types)):
            if want != have:
                raise TypeError(f"Expected output types {self._types!r} but got dataset with output types "
                                f"{dataset.output_types!r}.")
        for want, have in zip(nest.flatten(self._shapes), nest.flatten(dataset.output_shapes)):
            if not TensorShape(want).is_compatible_with(TensorShape(have)):
                raise TypeError(f"Expected output shapes compatible with {self._shapes!r} but got dataset with "
                                f"output shapes {dataset.output_shapes!r}.")
        op = apply_op(ops.MakeIterator, dataset=dataset._apply_options()._as_variant_tensor(),
                      iterator=self._iterator_resource,
                      name=name)
        return op

    def get_next(self, name: Optional[str] = None) -> Any:
        self._get_next_calls += 1
        outputs = apply_op(ops.IteratorGetNext, iterator=self._iterator_resource, name=name,
                           **_flat(self._types, self._shapes, self._classes))
        flat = outputs if isinstance(outputs, list) else [outputs]
        return structure.pack(self._types, self._shapes, self._classes, flat)

    def string_handle(self, name: Optional[str] = None) -> Tensor:
        return apply_op(ops.IteratorToStringHandle, resource_handle=self._iterator_resource, name=name)



def _shapes_like(types: Any, shapes: Any) -> Any:
    if shapes is None:
        return nest.pack_sequence_as(types, [unknown_shape()] * len(nest.flatten(types)))
    flat = nest.flatten(_shape_leaves(shapes, types))
    return nest.pack_sequence_as(types, [TensorShape(s.value if isinstance(s, _Whole) else s) for s in flat])


class _Whole:
    def __init__(self, value: Any) -> None:
        self.value = value


def _shape_leaves(shapes: Any, like: Any) -> Any:
    """`shapes` with each shape one leaf (a shape may itself be a list)."""
    if isinstance(like, dict):
        return {k: _shape_leaves(shapes[k], like[k]) for k in like}
    if isinstance(like, tuple):
        return tuple(_shape_leaves(s, t) for s, t in zip(shapes, like))
    return _Whole(shapes)


def make_one_shot_iterator(dataset: Any) -> Iterator:
    """An iterator that initializes itself at first use: its OneShotIterator op builds the
    dataset inside a function of no arguments (constants copied in by value)."""
    graph = _graph.get_default_graph()
    factory = factory_function(dataset._apply_options()._as_variant_tensor, "_make_dataset")
    _function.add_function(graph, factory)
    resource = apply_op(ops.OneShotIterator, dataset_factory=_function.function_attr_value(factory.name),
                        container="", shared_name="", **dataset._flat())
    return Iterator(resource, None, dataset.output_types, dataset.output_shapes, dataset._classes)


def make_initializable_iterator(dataset: Any, shared_name: Optional[str] = None) -> Iterator:
    if _graph.get_default_graph().executes_eagerly:  # as TF's: eagerly there is no step to run it in
        raise RuntimeError("`make_initializable_iterator()` is not supported in eager mode. Use Python-style "
                           "iteration instead.")
    return _initializable(dataset, shared_name)


def _initializable(dataset: Any, shared_name: Optional[str] = None) -> Iterator:
    resource = apply_op(ops.IteratorV2, shared_name=shared_name or f"iterator_{next(_ids)}", container="",
                        name="Iterator", **dataset._flat())
    initializer = apply_op(ops.MakeIterator, dataset=dataset._apply_options()._as_variant_tensor(),
                           iterator=resource)
    return Iterator(resource, initializer, dataset.output_types, dataset.output_shapes, dataset._classes)


class EagerIterator:
    """`iter(dataset)` in eager mode (TF 2's OwnedIterator): an iterator resource started at
    once; each `next` runs IteratorGetNext, and the end of the data stops the iteration."""

    def __init__(self, dataset: Any) -> None:
        self._iterator = _initializable(dataset)

    def __iter__(self) -> "EagerIterator":
        return self

    def __next__(self) -> Any:
        try:
            return self._iterator.get_next()
        except errors.OutOfRangeError:
            raise StopIteration from None

    def get_next(self, name: Optional[str] = None) -> Any:
        """The next element (OutOfRangeError at the end of the data)."""
        return self._iterator.get_next(name)
