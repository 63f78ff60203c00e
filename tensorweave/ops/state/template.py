"""`tf.make_template`: wraps a function so that the variables it creates (with get_variable) on
its first call are shared by all later calls."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops.state.variable_scope import variable_scope, VariableScope

__all__ = ["make_template", "Template"]


class Template:
    """A function whose variables live in one variable scope: created on the first call,
    reused (reuse=True) on every later call."""

    def __init__(self, name: str, func: Callable, create_scope_now: bool = False,
                 unique_name: Optional[str] = None, custom_getter: Optional[Callable] = None) -> None:
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: Optional[VariableScope] = None
        self._variables_created = False
        if create_scope_now:
            with variable_scope(unique_name, default_name=name, custom_getter=custom_getter) as vs:
                self._variable_scope = vs

    def _call_func(self, args: tuple, kwargs: dict) -> Any:
        trainable_before = len(_graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            if len(_graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)) > trainable_before:
                raise ValueError("Trainable variable created when calling a template after the first time, "
                                 "perhaps you used tf.Variable when you meant tf.get_variable: "
                                 f"{_graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)[trainable_before:]}")
        self._variables_created = True
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is not None:
            # Later calls reuse the variable scope but open a fresh name scope (scale_by_1/...).
            base = self._variable_scope.name.rsplit("/", 1)[-1]
            with variable_scope(self._variable_scope, reuse=True if self._variables_created else None,
                                auxiliary_name_scope=False), _graph.name_scope(base):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, default_name=self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    @property
    def name(self) -> str:
        return self._name

    @property
    def func(self) -> Callable:
        return self._func

    @property
    def variable_scope(self) -> Optional[VariableScope]:
        return self._variable_scope

    @property
    def variable_scope_name(self) -> Optional[str]:
        return None if self._variable_scope is None else self._variable_scope.name

    def _collection(self, key: str) -> list[Any]:
        if self._variable_scope is None:
            return []
        return _graph.get_collection(key, self._variable_scope.name + "/")

    @property
    def variables(self) -> list[Any]:
        return self.global_variables + self.local_variables

    @property
    def trainable_variables(self) -> list[Any]:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self) -> list[Any]:
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.global_variables if id(v) not in trainable]

    @property
    def global_variables(self) -> list[Any]:
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list[Any]:
        return self._collection(GraphKeys.LOCAL_VARIABLES)


def make_template(name_: str, func_: Callable, create_scope_now_: bool = False, unique_name_: Optional[str] = None,
                  custom_getter_: Optional[Callable] = None, **kwargs: Any) -> Template:
    """Wraps `func_` (called with `kwargs` bound) so that all its calls share the variables it
    creates with tf.get_variable on the first call, under variable scope `name_` (made unique,
    or exactly `unique_name_`)."""
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
