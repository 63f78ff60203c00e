"""`tf.contrib.framework` variables: creating model variables and finding variables by scope,
name or suffix (TF 1.15's contrib/framework/python/ops/variables.py semantics)."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops.state import get_variable, get_variable_scope, Variable, VariableScope
from tensorweave.contrib.framework.arg_scope import add_arg_scope

__all__ = ["variable", "model_variable", "local_variable", "global_variable", "add_model_variable",
           "get_variables", "get_model_variables", "get_local_variables", "get_trainable_variables",
           "get_variables_by_name", "get_variables_by_suffix", "get_variables_to_restore",
           "get_unique_variable", "get_variable_full_name"]


@add_arg_scope
def variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, regularizer: Any = None,
             trainable: bool = True, collections: Optional[Sequence[str]] = None, caching_device: Any = None,
             device: Any = None, partitioner: Any = None, custom_getter: Any = None,
             use_resource: Any = None) -> Variable:
    """Gets or creates a variable (tf.get_variable) in `collections` (default: the global
    variables), on `device` when one is given. A `custom_getter` is used instead of
    tf.get_variable, called with the same arguments plus the current scope's `reuse`."""
    collections = list(dict.fromkeys(collections if collections is not None else [GraphKeys.GLOBAL_VARIABLES]))
    if custom_getter is not None:
        getter: Any = functools.partial(custom_getter, reuse=get_variable_scope().reuse)
    else:
        getter = get_variable
    where = _graph.device(device) if device is not None else contextlib.nullcontext()
    with where:
        return getter(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                      trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner)


@add_arg_scope
def model_variable(name: str, shape: Any = None, dtype: Any = _dtypes.float32, initializer: Any = None,
                   regularizer: Any = None, trainable: bool = True, collections: Optional[Sequence[str]] = None,
                   caching_device: Any = None, device: Any = None, partitioner: Any = None,
                   custom_getter: Any = None, use_resource: Any = None) -> Variable:
    """A variable() also in the MODEL_VARIABLES collection (what a model's checkpoint holds)."""
    collections = list(collections or []) + [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                    trainable=trainable, collections=collections, caching_device=caching_device,
                    device=device, partitioner=partitioner, custom_getter=custom_getter)


def local_variable(initial_value: Any, validate_shape: bool = True, name: Optional[str] = None,
                   use_resource: Any = None) -> Variable:
    """A non-trainable Variable in LOCAL_VARIABLES."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def global_variable(initial_value: Any, validate_shape: bool = True, name: Optional[str] = None,
                    use_resource: Any = None) -> Variable:
    """A non-trainable Variable in GLOBAL_VARIABLES."""
    return Variable(initial_value, trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_model_variable(var: Variable) -> None:
    """Adds `var` to MODEL_VARIABLES unless it is there already."""
    if var not in _graph.get_collection(GraphKeys.MODEL_VARIABLES):
        _graph.add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope: Any = None, suffix: Optional[str] = None,
                  collection: str = GraphKeys.GLOBAL_VARIABLES) -> list[Variable]:
    """The variables of `collection` whose names start with `scope` (a regular expression
    matched at the start of the name, or a VariableScope) and end with `suffix`."""
    if isinstance(scope, VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return _graph.get_collection(collection, scope)


def get_model_variables(scope: Any = None, suffix: Optional[str] = None) -> list[Variable]:
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope: Any = None, suffix: Optional[str] = None) -> list[Variable]:
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope: Any = None, suffix: Optional[str] = None) -> list[Variable]:
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_suffix(suffix: str, scope: Any = None) -> list[Variable]:
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name: str, scope: Any = None) -> list[Variable]:
    """The global variables whose last name component is `given_name`."""
    suffix = "/" + given_name + ":|^" + given_name + ":"
    return get_variables(scope=scope, suffix=suffix)


def get_variables_to_restore(include: Optional[Sequence[str]] = None,
                             exclude: Optional[Sequence[str]] = None) -> list[Variable]:
    """The global variables under the `include` scopes (all when None) and under none of the
    `exclude` scopes, in collection order."""
    if include is None:
        chosen = get_variables()
    else:
        if not isinstance(include, (list, tuple)):
            raise TypeError("include is provided but is not a list or a tuple.")
        chosen = [v for scope in include for v in get_variables(scope)]
    dropped: set[int] = set()
    if exclude is not None:
        if not isinstance(exclude, (list, tuple)):
            raise TypeError("exclude is provided but is not a list or a tuple.")
        dropped = {id(v) for scope in exclude for v in get_variables(scope)}
    return [v for v in chosen if id(v) not in dropped]


def get_unique_variable(var_op_name: str) -> Variable:
    """The global variable whose op is named exactly `var_op_name`."""
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def get_variable_full_name(var: Variable) -> str:
    """The variable's op name (what a checkpoint calls it)."""
    return var.op.name
