"""One iterator over every op case the tests hold: the gradient-check table
(tests/gradient_cases), the element-wise tables of tests/ops/math/test_elementwise.py, and the
cases of this package's family modules, written for the ops neither of those reaches (queues,
tables, readers, datasets, summaries, training updates, images, strings, ...).

An `OpCase` builds its computation from input tensors with the public API, the same code in
graph mode and eagerly; `run.py` runs one both ways. tests/eager/test_every_op_eager.py runs all
of them and checks that every registered op type is covered."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from tensorweave.framework.op_def import get_op_def
from tensorweave.framework.op_def_library import apply_op

from tests.gradient_cases import all_cases as _gradient_table
from tests.ops.math import test_elementwise as _elementwise_table

# How the outputs of a case compare between graph mode and eager mode.
EXACT = "exact"          # same dtypes, shapes and values
SEEDED = "seeded"        # random, with global and op seeds: TF draws the same numbers both ways
SHAPES = "shapes"        # random or variable-initialised values: same dtypes and shapes only


@dataclasses.dataclass(frozen=True)
class OpCase:
    name: str
    build: Callable[..., Any]            # input tensors -> a tensor, SparseTensor, or a nest of them
    inputs: Callable[[np.random.RandomState], Sequence[np.ndarray]] = lambda rng: ()
    ops: tuple[str, ...] = ()            # op types the case is written for
    compare: str = EXACT
    expected: Optional[Callable[..., Any]] = None  # input arrays -> the flat NumPy outputs
    feed_shapes: bool = True             # graph mode: placeholders carry the inputs' static shapes


# Gradient-check cases written with graph-only constructs, which TF raises on in eager mode as
# well: tf.gradients inside the computation, or loops built from the raw Enter/Switch/Merge
# primitives (tests/eager/test_gradient_cases_eager.py checks that they raise).
GRAPH_ONLY_GRADIENT_CASES = frozenset({
    "math_sigmoid_second_derivative", "math_tanh_second_derivative", "math_sqrt_second_derivative",
    "math_rsqrt_second_derivative", "math_reciprocal_second_derivative", "nn_softplus_second_derivative",
    "nn_lrn_grad", "ref_enter", "ref_switch_true", "ref_switch_false", "ref_merge_true", "ref_merge_false"})


def raw(op_type: str, *inputs: Any, **attrs: Any) -> Any:
    """A node of `op_type` on these inputs (in its signature's order) and attrs, for ops whose
    public wrappers compute the result another way eagerly (tf.shape from the static shape) or
    that have no wrapper (ops the runtime's rewrites create)."""
    definition = get_op_def(op_type)
    named = {arg.name: value for arg, value in zip(definition.inputs, inputs)}
    return apply_op(definition, name=op_type.lstrip("_"), **named, **attrs)


def _gradient_cases() -> Iterator[OpCase]:
    for case in _gradient_table():
        if case.name in GRAPH_ONLY_GRADIENT_CASES:
            continue
        if case.init is not None:
            def inputs(rng: np.random.RandomState, init: Any = case.init) -> Sequence[np.ndarray]:
                return list(init(rng))
        else:
            def inputs(rng: np.random.RandomState, c: Any = case) -> Sequence[np.ndarray]:
                return [rng.uniform(c.low, c.high, s) for s in c.shapes]
        yield OpCase(f"grad:{case.name}", case.build, inputs, tuple(case.ops))


def _random_array(rng: np.random.RandomState, shape: tuple[int, ...], dtype: Any, positive: bool = False,
                  unit: bool = False) -> np.ndarray:
    dtype = np.dtype(dtype)
    if unit:
        return rng.uniform(-0.95, 0.95, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
    if dtype.kind in "iu":
        value = rng.randint(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    else:
        value = rng.randn(*shape).astype(dtype) * 3
    return (np.abs(value) + 1).astype(dtype) if positive else value


def _elementwise_cases() -> Iterator[OpCase]:
    table = _elementwise_table
    for fn, _ref, op, dtypes in table.BINARY:
        for dt in dtypes:
            def inputs(rng: np.random.RandomState, dt: Any = dt) -> Sequence[np.ndarray]:
                return [_random_array(rng, (2, 3), dt), table.nonzero(_random_array(rng, (3,), dt))]
            yield OpCase(f"elementwise:{op}-{np.dtype(dt).name}", fn, inputs, (op,))
    for fn, _ref, op, dtypes in table.UNARY:
        for dt in dtypes:
            yield OpCase(f"elementwise:{op}-{np.dtype(dt).name}", fn,
                         lambda rng, dt=dt: [_random_array(rng, (2, 3), dt)], (op,))
    for kind, rows in (("positive", table.POSITIVE), ("unit", table.UNIT_INTERVAL)):
        for fn, _ref, op in rows:
            for dt in (np.float32, np.float64):
                yield OpCase(f"elementwise:{op}-{np.dtype(dt).name}", fn,
                             lambda rng, dt=dt, kind=kind: [_random_array(rng, (3, 2), dt, positive=kind == "positive",
                                                                         unit=kind == "unit")], (op,))


def _family_cases() -> Iterator[OpCase]:
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "run":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        yield from getattr(module, "CASES", [])


def all_op_cases() -> list[OpCase]:
    """Every case, in a fixed order (names are unique)."""
    cases = [*_gradient_cases(), *_elementwise_cases(), *_family_cases()]
    names = [c.name for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"op case names must be unique: {duplicates}")
    return cases
