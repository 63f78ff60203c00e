"""`tf.layers.Layer`: the base class of TF1's object-oriented layers.

A layer owns a variable scope. Its first call (or first `add_weight`) opens
`variable_scope(None, default_name=<snake_case class name>)` (or the `name` given) in the
caller's scope, so names are made unique per graph and per enclosing scope exactly as TF's
(`dense`, `dense_1`, `tower/dense`); later calls re-enter that scope with reuse=True. Ops of a
call go into the scope's original name scope. Weights come from `tf.get_variable`, so
checkpoints name them as TF does; weight and activity regularization losses go to the
REGULARIZATION_LOSSES collection, and the updates a layer makes (batch norm's moving averages)
go to UPDATE_OPS after each call.
"""
from __future__ import annotations

import inspect
import re
import threading
import weakref
from typing import Any, Callable, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array import shape as _shape
from tensorweave.ops.math import cast, realdiv
from tensorweave.ops.state.variable_scope import get_variable, variable_scope, VariableScope

__all__ = ["Layer", "InputSpec"]


class InputSpec:
    """The rank, dtype and axis sizes a layer accepts (checked on each call)."""

    def __init__(self, dtype: Any = None, shape: Any = None, ndim: Optional[int] = None,
                 max_ndim: Optional[int] = None, min_ndim: Optional[int] = None,
                 axes: Optional[dict[int, int]] = None) -> None:
        self.dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})

    def check(self, layer_name: str, shape: TensorShape) -> None:
        rank = shape.ndims
        if self.ndim is not None and rank != self.ndim:
            raise ValueError(f"Input 0 of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"ndim={self.ndim}, found ndim={rank}. Full shape received: {shape}")
        if self.min_ndim is not None and rank is not None and rank < self.min_ndim:
            raise ValueError(f"Input 0 of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"min_ndim={self.min_ndim}, found ndim={rank}. Full shape received: {shape}")
        if self.max_ndim is not None and rank is not None and rank > self.max_ndim:
            raise ValueError(f"Input 0 of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"max_ndim={self.max_ndim}, found ndim={rank}. Full shape received: {shape}")
        for axis, size in self.axes.items():
            if rank is None:
                break
            dim = shape.dims[axis].value
            if size is not None and dim is not None and dim != size:
                raise ValueError(f"Input 0 of layer \"{layer_name}\" is incompatible with the layer: expected "
                                 f"axis {axis} of input shape to have value {size}, but received input "
                                 f"with shape {shape}")


# Layer names (not scope names) are unique per graph as Keras numbers them: the first Dense of a
# graph is `dense_1`, whatever its variable scope turns out to be.
_NAME_UIDS: "weakref.WeakKeyDictionary[Any, dict[str, int]]" = weakref.WeakKeyDictionary()
_NAME_LOCK = threading.Lock()


def _to_snake_case(name: str) -> str:
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def _unique_layer_name(base: str) -> str:
    graph = _graph.get_default_graph()
    with _NAME_LOCK:
        uids = _NAME_UIDS.setdefault(graph, {})
        uids[base] = uids.get(base, 0) + 1
        return f"{base}_{uids[base]}"


def _add_to_collection(items: list[Any], key: str) -> None:
    ref = _graph.get_collection_ref(key)
    for item in items:
        if not any(item is existing for existing in ref):
            ref.append(item)


class Layer:
    """Base layer: subclasses create weights in `build(input_shape)` with `add_weight` and
    compute in `call(inputs, ...)`; `__call__` builds on the first call inside the layer's
    variable scope.

    Args:
      trainable: whether the layer's variables are trainable (in TRAINABLE_VARIABLES).
      name: the layer's name, which is also its variable scope's name (uniquified if unset).
      dtype: the dtype of the layer's weights (default: the first input's dtype).
    """

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        for key in kwargs:
            if key not in ("input_shape", "batch_input_shape", "batch_size", "weights", "autocast"):
                raise TypeError(f"Keyword argument not understood: {key}")
        self.trainable = trainable
        self.built = False
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []
        self._updates: list[Any] = []
        self._losses: list[Any] = []
        self.input_spec: Optional[InputSpec] = None
        self._init_set_name(name)
        self._call_has_scope_arg = "scope" in inspect.signature(self.call).parameters
        self._current_scope: Optional[VariableScope] = None
        self._scope: Optional[VariableScope] = None
        if scope:
            with variable_scope(scope) as captured:
                self._scope = captured

    def _init_set_name(self, name: Any) -> None:
        base = _to_snake_case(type(self).__name__)
        if isinstance(name, VariableScope):
            self._name, self._base_name = _unique_layer_name(base), name.name
        elif name:
            self._name = self._base_name = name
        else:
            self._name, self._base_name = _unique_layer_name(base), base

    # -- properties --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> Any:
        return None if self._dtype is None else self._dtype.name

    @property
    def scope_name(self) -> str:
        if not self._scope:
            raise ValueError(f'No name available for layer scope because the layer "{self._name}" has not '
                             f"been used yet. The scope name is determined the first time the layer "
                             f"instance is called. You must therefore call the layer before querying "
                             f"`scope_name`.")
        return self._scope.name

    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Any]:
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self) -> list[Any]:
        return list(self._updates) if self.trainable else []

    @property
    def losses(self) -> list[Any]:
        return list(self._losses)

    @property
    def activity_regularizer(self) -> Optional[Callable]:
        return self._activity_regularizer

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        for update in nest.flatten(updates):
            self._updates.append(update() if callable(update) and not hasattr(update, "op") else update)

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        new = [convert_to_tensor(loss) for loss in nest.flatten(losses) if loss is not None]
        self._losses.extend(new)
        _add_to_collection(new, GraphKeys.REGULARIZATION_LOSSES)

    def get_updates_for(self, inputs: Any) -> list[Any]:
        return self.updates

    def get_losses_for(self, inputs: Any) -> list[Any]:
        return self.losses

    # -- subclass API ------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        # TF 1.x's graph-mode base layer raises this same error: a layer that is asked its output
        # shape without running must say how (every layer here does).
        raise NotImplementedError(f"{type(self).__name__}.compute_output_shape")

    # -- scopes and weights ------------------------------------------------------------------
    def _set_scope(self, scope: Any = None) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def _name_scope(self) -> str:
        assert self._current_scope is not None
        return self._current_scope.original_name_scope

    def add_weight(self, name: str, shape: Any, dtype: Any = None, initializer: Any = None,
                   regularizer: Optional[Callable] = None, trainable: Optional[bool] = None,
                   constraint: Optional[Callable] = None, partitioner: Any = None,
                   use_resource: Any = None, **kwargs: Any) -> Any:
        """Creates (or, when reused, gets) the variable `name` in the layer's scope; a new
        variable with a regularizer adds its loss to REGULARIZATION_LOSSES."""
        for key in kwargs:
            if key not in ("synchronization", "aggregation", "experimental_autocast", "getter"):
                raise TypeError(f"Unknown keyword argument: {key}")
        trainable = True if trainable is None else trainable
        dtype = _dtypes.as_dtype(dtype or self._dtype or _dtypes.float32)
        existing = set(id(v) for v in _graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        self._set_scope(None)
        reuse = self.built or self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with _graph.name_scope(self._name_scope()):
                if initializer is None:
                    initializer = scope.initializer
                variable = get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                           trainable=trainable and self.trainable, constraint=constraint,
                                           partitioner=partitioner)
                if regularizer is not None and id(variable) not in existing:
                    with _graph.name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self.add_loss(loss)
        in_trainable = any(variable is v for v in _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        target = self._trainable_weights if trainable and in_trainable else self._non_trainable_weights
        if not any(variable is v for v in target):
            target.append(variable)
        return variable

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Builds the layer on its first call (inside its variable scope), then runs `call`;
        the layer's updates are added to UPDATE_OPS."""
        scope_arg = kwargs.pop("scope", None)
        self._set_scope(scope_arg)
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            if self._call_has_scope_arg:
                kwargs["scope"] = scope
            with _graph.name_scope(self._name_scope()):
                inputs = nest.pack_sequence_as(inputs, [_as_input(t) for t in nest.flatten(inputs)])
                first = nest.flatten(inputs)[0]
                if not self.built:
                    if self._dtype is None and first.dtype.base_dtype.is_floating:
                        self._dtype = first.dtype.base_dtype
                    self._check_input_spec(inputs)
                    shapes = nest.pack_sequence_as(inputs, [t.shape for t in nest.flatten(inputs)])
                    self.build(shapes)
                    self.built = True
                else:
                    self._check_input_spec(inputs)
                outputs = self.call(inputs, *args, **kwargs)
                if outputs is None:
                    raise ValueError("A layer's `call` method should return a Tensor or a list of Tensors, "
                                     "not None (layer: " + self.name + ").")
                if self._activity_regularizer is not None:
                    self._add_activity_loss(outputs)
        _add_to_collection(self.updates, GraphKeys.UPDATE_OPS)
        return outputs

    def _check_input_spec(self, inputs: Any) -> None:
        if self.input_spec is not None:
            self.input_spec.check(self.name, nest.flatten(inputs)[0].shape)

    def _add_activity_loss(self, outputs: Any) -> None:
        # As Keras: the regularizer's value on each output, divided by the batch size.
        with _graph.name_scope("ActivityRegularizer"):
            for output in nest.flatten(outputs):
                loss = self._activity_regularizer(output)
                batch = cast(_shape(output)[0], loss.dtype.base_dtype)
                self.add_loss(realdiv(loss, batch))

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The same as calling the layer."""
        return self(inputs, *args, **kwargs)


def _as_input(value: Any) -> Any:
    return value if _graph.is_tensor_like(value) else convert_to_tensor(value)
