"""`tf.contrib.framework.arg_scope`: default keyword arguments for decorated functions.

A function decorated with `add_arg_scope` looks up the innermost `arg_scope` that names it and
takes that scope's keyword arguments as defaults; arguments given at the call win. Scopes nest:
an inner scope extends (and may override) the outer scope's arguments."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

__all__ = ["arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope", "arg_scoped_arguments",
           "arg_scope_func_key"]

# One stack for the process, as in TF: scopes are opened around graph construction code.
_ARG_STACK: list[dict[str, dict[str, Any]]] = [{}]
# key of every decorated function -> the names of its keyword arguments (those with defaults).
_DECORATED_OPS: dict[str, tuple[str, ...]] = {}


def arg_scope_func_key(op: Any) -> str:
    """The key a function is known by in an arg_scope."""
    return getattr(op, "_key_op", str(op))


def current_arg_scope() -> dict[str, dict[str, Any]]:
    """The innermost scope: function key -> keyword arguments."""
    return _ARG_STACK[-1]


def _kwarg_names(func: Callable) -> tuple[str, ...]:
    code = func.__code__
    n_defaults = len(func.__defaults__) if func.__defaults__ else 0
    return code.co_varnames[code.co_argcount - n_defaults:code.co_argcount]


def add_arg_scope(func: Callable) -> Callable:
    """Decorates `func` so that `arg_scope([func], ...)` can supply its keyword arguments."""
    key = arg_scope_func_key(func)

    @functools.wraps(func)
    def func_with_args(*args: Any, **kwargs: Any) -> Any:
        scoped = current_arg_scope().get(key)
        if scoped:
            merged = dict(scoped)
            merged.update(kwargs)
            kwargs = merged
        return func(*args, **kwargs)

    _DECORATED_OPS[key] = _kwarg_names(func)
    func_with_args._key_op = key  # type: ignore[attr-defined]
    return func_with_args


def has_arg_scope(func: Any) -> bool:
    """Whether `func` was decorated with `add_arg_scope`."""
    return arg_scope_func_key(func) in _DECORATED_OPS


def arg_scoped_arguments(func: Any) -> tuple[str, ...]:
    """The keyword arguments an arg_scope may set for `func`."""
    if not has_arg_scope(func):
        raise ValueError(f"{func} is not decorated with @add_arg_scope")
    return _DECORATED_OPS[arg_scope_func_key(func)]


@contextlib.contextmanager
def arg_scope(list_ops_or_scope: Any, **kwargs: Any) -> Iterator[dict[str, dict[str, Any]]]:
    """Opens a scope in which the listed decorated functions get `kwargs` as defaults.

    `list_ops_or_scope` is a list or tuple of functions, or a scope (the dict an earlier
    `arg_scope` yielded) to re-enter; with a scope no keyword arguments may be given."""
    if isinstance(list_ops_or_scope, dict):
        if kwargs:
            raise ValueError("When attempting to re-use a scope by suppling a dictionary, kwargs must "
                             "be empty.")
        scope = list_ops_or_scope
    else:
        if not isinstance(list_ops_or_scope, (list, tuple)):
            raise TypeError("list_ops_or_scope must either be a list/tuple or reused scope (i.e. dict)")
        scope = dict(current_arg_scope())
        for op in list_ops_or_scope:
            if not has_arg_scope(op):
                raise ValueError(f"{op} is not decorated with @add_arg_scope")
            key = arg_scope_func_key(op)
            merged = dict(scope.get(key, {}))
            merged.update(kwargs)
            scope[key] = merged
    _ARG_STACK.append(scope)
    try:
        yield scope
    finally:
        _ARG_STACK.pop()
