"""`tf.variable_scope` and `tf.get_variable`: variables named by scope and shared by `reuse`.

Each graph keeps one variable store (full name -> Variable). `reuse=True` requires the variable
to exist, `reuse=False/None` (at the top) forbids it, `tf.AUTO_REUSE` creates or reuses."""
from __future__ import annotations

import contextlib
import enum
from typing import Any, Callable, Iterator, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_shape import as_shape
from tensorweave.ops.state import init_ops
from tensorweave.ops.state.variables import Variable

__all__ = ["VariableScope", "variable_scope", "get_variable", "get_variable_scope", "AUTO_REUSE",
           "get_local_variable", "no_regularizer"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_: Any) -> None:
    return None


class VariableScope:
    """Defaults for the variables created under a scope (initializer, regularizer, reuse, ...)."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None, regularizer: Any = None,
                 caching_device: Any = None, partitioner: Any = None, custom_getter: Any = None,
                 name_scope: str = "", dtype: Any = _dtypes.float32, use_resource: Any = None,
                 constraint: Any = None) -> None:
        self._name = name
        self._reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.caching_device = caching_device
        self.partitioner = partitioner
        self.custom_getter = custom_getter
        self.original_name_scope = name_scope
        self.dtype = _dtypes.as_dtype(dtype)
        self.constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def reuse(self) -> Any:
        return self._reuse

    def reuse_variables(self) -> None:
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self.initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self.regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def get_variable(self, name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                     regularizer: Any = None, trainable: Optional[bool] = None,
                     collections: Optional[Sequence[str]] = None, **kwargs: Any) -> Variable:
        full_name = f"{self._name}/{name}" if self._name else name
        store = _variable_store()
        initializer = initializer if initializer is not None else self.initializer
        regularizer = regularizer if regularizer is not None else self.regularizer
        dtype = _dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        constraint = kwargs.get("constraint")
        return store.get_variable(full_name, shape, dtype, initializer, regularizer, self._reuse,
                                  trainable, collections, kwargs.get("validate_shape", True),
                                  constraint if constraint is not None else self.constraint)


class _VariableStore:
    def __init__(self) -> None:
        self.vars: dict[str, Variable] = {}

    def get_variable(self, name: str, shape: Any, dtype: _dtypes.DType, initializer: Any, regularizer: Any,
                     reuse: Any, trainable: Optional[bool], collections: Optional[Sequence[str]],
                     validate_shape: bool, constraint: Optional[Callable] = None) -> Variable:
        shape = None if shape is None else as_shape(shape)
        if name in self.vars:
            if reuse is False or reuse is None:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set "
                                 "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            found = self.vars[name]
            if shape is not None and not shape.is_compatible_with(found.get_shape()):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} and "
                                 f"found shape {found.get_shape()}.")
            if dtype != found.dtype.base_dtype:
                raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and "
                                 f"found dtype {found.dtype.base_dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                             "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            if dtype.is_floating:
                initializer = init_ops.glorot_uniform_initializer()
            elif dtype.is_integer or dtype.is_bool or dtype == _dtypes.string:
                initializer = init_ops.zeros_initializer()
            else:
                raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")
        if callable(initializer) and not _is_tensor_like(initializer):
            if shape is None or not shape.is_fully_defined():
                raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead "
                                 f"was {shape}.")
            init_shape = shape

            def init_val() -> Any:
                return initializer(init_shape.as_list(), dtype=dtype)
            initial_value: Any = init_val
        else:
            initial_value = initializer
        if trainable is None:
            trainable = True
        with _graph.name_scope(None):
            variable = Variable(initial_value, trainable=trainable, collections=collections,
                                validate_shape=validate_shape, name=name + "/",
                                dtype=dtype, constraint=constraint)
        if shape is not None and validate_shape and not shape.is_compatible_with(variable.get_shape()):
            raise ValueError(f"Initializer shape {variable.get_shape()} does not match the requested "
                             f"shape {shape} for variable {name}")
        self.vars[name] = variable
        if regularizer is not None:
            with _graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable


def _is_tensor_like(x: Any) -> bool:
    return _graph.is_tensor_like(x) or not callable(x)


_STORE_KEY = ("__variable_store",)
_SCOPE_KEY = ("__varscope",)


def _variable_store() -> _VariableStore:
    ref = _graph.get_collection_ref(_STORE_KEY)  # type: ignore[arg-type]
    if not ref:
        ref.append(_VariableStore())
    return ref[0]


def get_variable_scope() -> VariableScope:
    ref = _graph.get_collection_ref(_SCOPE_KEY)  # type: ignore[arg-type]
    if not ref:
        ref.append(VariableScope(False))
    return ref[0]


def _set_variable_scope(scope: VariableScope) -> None:
    ref = _graph.get_collection_ref(_SCOPE_KEY)  # type: ignore[arg-type]
    ref[:] = [scope]


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: Optional[bool] = None,
                 collections: Optional[Sequence[str]] = None, caching_device: Any = None,
                 partitioner: Any = None, validate_shape: bool = True, use_resource: Any = None,
                 custom_getter: Any = None, constraint: Any = None, **kwargs: Any) -> Variable:
    """Gets an existing variable with these parameters or creates a new one (TF1 semantics)."""
    return get_variable_scope().get_variable(name, shape, dtype, initializer, regularizer, trainable,
                                             collections, validate_shape=validate_shape, constraint=constraint)


def get_local_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                       **kwargs: Any) -> Variable:
    kwargs.pop("collections", None)
    return get_variable(name, shape, dtype, initializer, trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES], **kwargs)


@contextlib.contextmanager
def variable_scope(name_or_scope: Any, default_name: Optional[str] = None,
                   values: Optional[Sequence[Any]] = None, initializer: Any = None,
                   regularizer: Any = None, caching_device: Any = None, partitioner: Any = None,
                   custom_getter: Callable | None = None, reuse: Any = None, dtype: Any = None,
                   use_resource: Any = None, constraint: Any = None,
                   auxiliary_name_scope: bool = True) -> Iterator[VariableScope]:
    """Opens a variable scope (and a name scope) for creating or sharing variables."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None  # TF1: False means "inherit" inside a scope
    graph = _graph._graph_from_values(values)
    with graph.as_default():
        outer = get_variable_scope()
        if isinstance(name_or_scope, VariableScope):
            full_name = name_or_scope.name
            name_scope_name = name_or_scope.original_name_scope or full_name + "/"
            new_reuse = reuse if reuse is not None else (name_or_scope.reuse or outer.reuse)
            base = name_or_scope
        else:
            if name_or_scope is not None:
                relative = name_or_scope
            else:
                relative = _unique_default_name(outer, default_name)  # type: ignore[arg-type]
            full_name = f"{outer.name}/{relative}" if outer.name else relative
            name_scope_name = relative
            new_reuse = outer.reuse if reuse is None else reuse
            if outer.reuse is True and reuse is None:
                new_reuse = True
            base = outer
        ctx = graph.name_scope(name_scope_name) if auxiliary_name_scope else contextlib.nullcontext(
            graph.get_name_scope() + "/")
        with ctx as ns:
            scope = VariableScope(
                new_reuse, full_name,
                initializer if initializer is not None else base.initializer,
                regularizer if regularizer is not None else base.regularizer,
                caching_device or base.caching_device, partitioner or base.partitioner,
                custom_getter or base.custom_getter,
                # a scope object keeps the name scope it was first opened in, as TF's
                name_or_scope.original_name_scope if isinstance(name_or_scope, VariableScope) else ns or "",
                dtype if dtype is not None else base.dtype,
                constraint=constraint if constraint is not None else base.constraint)
            _set_variable_scope(scope)
            try:
                with _opened(full_name, isinstance(name_or_scope, VariableScope)):
                    yield scope
            finally:
                _set_variable_scope(outer)


def _scope_counts() -> dict[str, int]:
    """How many times each variable scope name has been opened (TF's variable_scopes_count),
    per graph: default names are made unique against it."""
    counts = _graph.get_collection_ref(("__default_scope_counts",))  # type: ignore[arg-type]
    if not counts:
        counts.append({})
    table: dict[str, int] = counts[0]
    return table


def _unique_default_name(outer: VariableScope, default_name: str) -> str:
    """TF's _get_unique_variable_scope: `default_name`, or `default_name_<i>` with the first i
    whose scope has not been opened since its enclosing named scope was last entered (leaving a
    named scope forgets its subscopes, so `with variable_scope('d', reuse=True)` names its
    default-named subscopes as the first `with variable_scope('d')` did)."""
    counts = _scope_counts()
    prefix = f"{outer.name}/" if outer.name else ""
    if not counts.get(prefix + default_name, 0):
        return default_name
    i = 1
    while counts.get(f"{prefix}{default_name}_{i}", 0):
        i += 1
    return f"{default_name}_{i}"


@contextlib.contextmanager
def _opened(full_name: str, by_object: bool) -> Iterator[None]:
    """Counts `full_name` as opened; on leaving, forgets the subscopes opened inside it (a scope
    entered by name), or restores every count (one re-entered through its VariableScope), as TF."""
    counts = _scope_counts()
    counts[full_name] = counts.get(full_name, 0) + 1
    saved = dict(counts) if by_object else None
    try:
        yield
    finally:
        if saved is not None:
            counts.clear()
            counts.update(saved)
        else:
            inside = full_name + "/"
            for key in counts:
                if key.startswith(inside):
                    counts[key] = 0
