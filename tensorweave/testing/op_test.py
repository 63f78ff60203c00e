"""Helpers the op tests share: run a graph, compare with a NumPy reference, check that each op's
inferred static shape agrees with the shape of its real output, and check that bad input fails
with TF's error class at run time or at graph construction."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Tensor
from tensorweave.runtime.session import Session


def evaluate(fetches: Any, feed_dict: Optional[dict] = None, graph: Optional[_graph.Graph] = None) -> Any:
    """Runs `fetches` in a fresh session on their graph."""
    g = graph or _first_graph(fetches) or _graph.get_default_graph()
    with Session(graph=g) as sess:
        return sess.run(fetches, feed_dict)


def _first_graph(fetches: Any) -> Optional[_graph.Graph]:
    if isinstance(fetches, Tensor) or hasattr(fetches, "graph"):
        return fetches.graph
    if isinstance(fetches, (list, tuple)):
        for f in fetches:
            g = _first_graph(f)
            if g is not None:
                return g
    return None


def assert_static_shape_matches(tensor: Tensor, value: Any) -> None:
    """The inferred static shape must be compatible with the real one, with the same rank
    whenever the rank is known."""
    actual = np.shape(value)
    static = tensor.shape
    if static.ndims is not None:
        assert static.ndims == len(actual), (
            f"{tensor.name}: static rank {static.ndims} ({static}) but real shape {actual}")
        assert static.is_compatible_with(actual), (
            f"{tensor.name}: static shape {static} incompatible with real shape {actual}")


def check_op(tensor: Tensor, expected: Any, feed_dict: Optional[dict] = None, rtol: float = 1e-6,
             atol: float = 1e-6, exact_dtype: bool = True) -> Any:
    """Evaluates `tensor`, checks dtype, static shape and values against `expected`."""
    value = evaluate(tensor, feed_dict)
    assert_static_shape_matches(tensor, value)
    if tensor.dtype.base_dtype.name == "string":  # a scalar string fetches as bytes
        assert isinstance(value, (bytes, np.ndarray)), f"{tensor.name}: fetched {type(value)}"
        got, expected = np.asarray(value, dtype=object), np.asarray(expected, dtype=object)
    else:
        got, expected = np.asarray(value), np.asarray(expected)
    if exact_dtype:
        want = np.dtype(tensor.dtype.base_dtype.as_numpy_dtype)
        assert got.dtype == want, f"{tensor.name}: dtype {got.dtype}, declared {want}"
    assert got.shape == expected.shape, f"{tensor.name}: shape {got.shape}, expected {expected.shape}"
    if got.dtype == object or got.dtype.kind in ("b", "i", "u", "S", "U"):
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return value


def assert_run_error(fetches: Any, feed_dict: Optional[dict] = None,
                     error: type[BaseException] = errors.InvalidArgumentError, match: Optional[str] = None,
                     graph: Optional[_graph.Graph] = None) -> Any:
    """Runs `fetches` (as `evaluate`) and returns the error it raised, which must be an `error`
    whose text matches the regular expression `match` (re.search), when given."""
    return _expect(error, match, lambda: evaluate(fetches, feed_dict, graph))


def assert_build_error(build: Callable[..., Any], *args: Any, error: type[BaseException] = ValueError,
                       match: Optional[str] = None, **kwargs: Any) -> Any:
    """Calls `build(*args, **kwargs)` (graph construction) and returns the error it raised, which
    must be an `error` whose text matches `match`, when given."""
    return _expect(error, match, lambda: build(*args, **kwargs))


def _expect(error: type[BaseException], match: Optional[str], call: Callable[[], Any]) -> Any:
    try:
        result = call()
    except error as raised:
        if match is not None and not re.search(match, str(raised)):
            raise AssertionError(f"{type(raised).__name__} raised, but {str(raised)!r} does not match "
                                 f"{match!r}") from raised
        return raised
    raise AssertionError(f"expected {error.__name__}, but the call returned {result!r}")
