"""tf.xla.experimental.jit_scope: marks the ops created inside for JIT compilation.

Ops made in the scope carry `_XlaCompile` (and `_XlaSeparateCompiledGradients`) and an
`_XlaScope` name: each outermost jit_scope of a graph is a new scope `jit_scope_<n>`, and
nested ones share their parent's, so clusters never mix two scopes (grappler/jit/). The
gradients of those ops are compiled as well, in the same scope or, with
separate_compiled_gradients, in one of their own.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Union

from tensorweave.framework import graph as _graph

__all__ = ["experimental_jit_scope"]

_XLA_SCOPE_KEY = "__xla_scope"


class _XlaScope:
    """The per-graph counter of outermost scopes and the current nesting depth."""

    def __init__(self) -> None:
        self.count = 0
        self.depth = 0


@contextlib.contextmanager
def experimental_jit_scope(compile_ops: Union[bool, Callable[[Any], bool]] = True,
                           separate_compiled_gradients: bool = False) -> Iterator[None]:
    """Ops created in this scope are compiled with the JIT (`compile_ops=False` keeps them out,
    also under auto-clustering)."""
    graph = _graph.get_default_graph()
    if graph.executes_eagerly:
        raise RuntimeError("xla.experimental.jit_scope is not supported when eager execution is enabled. "
                           "Try use it inside tf.function.")
    if callable(compile_ops):
        raise TypeError("jit_scope: compile_ops must be a bool here (a callable over NodeDefs is not "
                        "supported by tensorweave)")
    attrs: dict[str, Any] = {"_XlaCompile": bool(compile_ops),
                             "_XlaSeparateCompiledGradients": bool(separate_compiled_gradients)}
    counters = graph.get_collection_ref(_XLA_SCOPE_KEY)
    if not counters:
        counters.append(_XlaScope())
    counter = counters[0]
    if counter.depth == 0:  # an outermost scope: a new cluster scope; nested ones share it
        attrs["_XlaScope"] = f"jit_scope_{counter.count}"
        counter.count += 1
    counter.depth += 1
    try:
        with graph._attr_scope(attrs):
            yield
    finally:
        counter.depth -= 1
