"""`tf.GradientTape` (TF 1.15's eager/backprop.py): records eager ops and computes gradients
by replaying, in reverse, the SAME registered gradient functions `tf.gradients` uses
(gradients.gradient_function: overrides, RegisterGradient, then the op definition's own).

A gradient function receives an `EagerOperation` with the recorded op's definition, attrs,
inputs and outputs; the ops it builds run eagerly, so an outer tape records them and nesting
tapes gives higher-order gradients. Broadcasting is undone and partial gradients are summed as
tf.gradients does (gradients.unbroadcast, gradients' aggregation: IndexedSlices stay sparse
when all parts are, which is what a variable read through tf.gather gets).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

import numpy as np

from tensorweave.gradients import (UnconnectedGradients, aggregate_gradients, gradient_function,
                                  gradients as _graph_gradients, input_gradients)
from tensorweave.eager import tape as _tape
from tensorweave.eager.execute import EagerOperation
from tensorweave.eager.tensor import EagerTensor
from tensorweave.framework import nest
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array as array_ops


class GradientTape:
    """Records operations run eagerly inside its context for automatic differentiation.

    Trainable variables read inside the context are watched automatically (unless
    `watch_accessed_variables=False`); other tensors with `watch`. A non-persistent tape allows
    one `gradient` call, a persistent one any number."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._tape: Optional[_tape.Tape] = None
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._recording = False
        self._used = False
        # Building a graph (a tf.function being traced, or graph mode): the gradients are
        # tf.gradients of what the graph computes; the tape only keeps what was watched.
        self._graph_watched: Optional[set[int]] = None
        # ... and the outputs of ops built inside stop_recording there: constants to the
        # gradient, as unrecorded ops are to an eager tape.
        self._graph_stopped: list[Any] = []

    # -- recording ---------------------------------------------------------------------------------
    def __enter__(self) -> "GradientTape":
        if not get_default_graph().executes_eagerly:
            self._graph_watched = set()
            self._recording = True
            return self
        self._push()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._graph_watched is not None:
            self._recording = False
        elif self._recording:
            self._pop()

    def _push(self) -> None:
        if self._recording:
            raise ValueError("Tape is already recording.")
        if self._tape is None:
            self._tape = _tape.Tape(self._persistent, self._watch_accessed_variables)
        _tape.push(self._tape)
        self._recording = True

    def _pop(self) -> None:
        if not self._recording:
            raise ValueError("Tape is not recording.")
        _tape.pop(self._tape)  # type: ignore[arg-type]
        self._recording = False

    def watch(self, tensor: Any) -> None:
        """Ensures `tensor` (a tensor, a variable, or a nest of them) is traced by this tape."""
        if self._graph_watched is not None:
            self._graph_watched.update(id(t) for t in nest.flatten(tensor))
            return
        if self._tape is None:
            raise RuntimeError("GradientTape.watch needs the tape's context to have been entered.")
        for t in nest.flatten(tensor):
            if _is_variable(t):
                self._tape.watch_variable(t)
            elif isinstance(t, EagerTensor):
                self._tape.watch(t)
            else:
                raise ValueError(f"Passed in object of type {type(t)}, not tf.Tensor")

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording operations on this tape."""
        if not self._recording:
            raise ValueError("Tape must be recording when stop_recording is called.")
        if self._graph_watched is not None:
            graph = get_default_graph()
            start = len(graph.get_operations())
            try:
                yield
            finally:
                self._graph_stopped.extend(t for op in graph.get_operations()[start:] for t in op.outputs)
            return
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Clears everything this tape has recorded (it keeps recording if it was)."""
        if self._tape is not None:
            self._tape.reset()
        self._graph_stopped.clear()
        self._used = False

    def watched_variables(self) -> tuple[Any, ...]:
        return tuple(self._tape.variables.values()) if self._tape is not None else ()

    # -- gradients -------------------------------------------------------------------------------
    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = UnconnectedGradients.NONE) -> Any:
        """d(sum of target)/d(source) for each source, in the nested structure of `sources`."""
        if self._graph_watched is not None:
            return self._graph_gradient(target, sources, output_gradients, unconnected_gradients)
        self._start_use()
        unconnected = UnconnectedGradients.check(unconnected_gradients)
        flat_targets = nest.flatten(target)
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if not (_is_variable(s) or isinstance(s, EagerTensor)):
                raise ValueError(f"Passed in object of type {type(s)}, not tf.Tensor or tf.Variable")
        grads_in = None if output_gradients is None else nest.flatten(output_gradients)
        result = self._compute(flat_targets, flat_sources, grads_in, unconnected)
        self._finish_use()
        return nest.pack_sequence_as(sources, result)

    def _graph_gradient(self, target: Any, sources: Any, output_gradients: Any, unconnected_gradients: Any) -> Any:
        """A tape entered while building a graph: tf.gradients of the targets with respect to the
        watched sources (trainable variables are watched when accessed, as eagerly); sources
        not watched get None, or zeros with UnconnectedGradients.ZERO."""
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")
        unconnected = UnconnectedGradients.check(unconnected_gradients)
        flat_sources = nest.flatten(sources)
        watched = self._graph_watched or set()
        tensors = [convert_to_tensor(s) for s in flat_sources]
        wanted = [i for i, (s, t) in enumerate(zip(flat_sources, tensors))
                  if id(s) in watched or id(t) in watched
                  or (self._watch_accessed_variables and _trainable_variable(s))]
        result: list[Any] = [None] * len(flat_sources)
        if wanted:
            grads_in = None if output_gradients is None else nest.flatten(output_gradients)
            found = _graph_gradients(nest.flatten(target), [tensors[i] for i in wanted], grad_ys=grads_in,
                                     stop_gradients=self._graph_stopped or None,
                                     unconnected_gradients=unconnected)
            for i, g in zip(wanted, found):
                result[i] = g
        if unconnected == UnconnectedGradients.ZERO:
            result = [array_ops.zeros_like(t) if g is None else g for g, t in zip(result, tensors)]
        if not self._persistent:
            self._used = True
        return nest.pack_sequence_as(sources, result)

    def _start_use(self) -> None:
        if self._tape is None:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")
        if self._used and not self._persistent:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")

    def _finish_use(self) -> None:
        if not self._persistent:
            self._used = True
            if self._recording:
                self._pop()
            self._tape = None  # its records are freed

    def _compute(self, targets: list[Any], sources: list[Any], output_gradients: Optional[list[Any]],
                 unconnected: str) -> list[Any]:
        tape = self._tape
        assert tape is not None
        # The gradient's own ops are recorded by outer tapes only (nesting: higher order).
        # The "gradients" name scope, as tf.gradients': gradient functions that name what they
        # make after it (TensorArray gradients) find it; reused, so no name piles up per call.
        graph = get_default_graph()
        with _tape.stop_recording_of(tape), graph.name_scope("gradients/"):
            return _backprop(tape, targets, sources, output_gradients, unconnected)

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = UnconnectedGradients.NONE,
                 parallel_iterations: Any = None, experimental_use_pfor: bool = True) -> Any:
        """For each source, the Jacobian of `target`: shape target.shape + source.shape."""
        self._start_use()
        unconnected = UnconnectedGradients.check(unconnected_gradients)
        flat_sources = nest.flatten(sources)
        target = convert_to_tensor(target)
        n = int(np.prod(target.shape.as_list()))
        rows: list[list[Any]] = [[] for _ in flat_sources]
        for i in range(n):
            seed = _one_hot_like(target, i)
            grads = self._compute([target], flat_sources, [seed], UnconnectedGradients.ZERO)
            for k, g in enumerate(grads):
                rows[k].append(convert_to_tensor(g))
        results = []
        for k, s in enumerate(flat_sources):
            shape = target.shape.as_list() + s.shape.as_list()
            if n == 0:
                results.append(array_ops.zeros(shape, dtype=s.dtype.base_dtype))
                continue
            jac = array_ops.reshape(array_ops.stack(rows[k]), shape)
            if unconnected == UnconnectedGradients.NONE and not np.any(jac.numpy()) and \
                    not _connected(self._tape, target, s):
                jac = None
            results.append(jac)
        self._finish_use()
        return nest.pack_sequence_as(sources, results)

    def batch_jacobian(self, target: Any, source: Any, unconnected_gradients: Any = UnconnectedGradients.NONE,
                       parallel_iterations: Any = None, experimental_use_pfor: bool = True) -> Any:
        """Jacobian of each example of `target` (axis 0) w.r.t. the same example of `source`,
        assuming examples are independent: shape [batch] + target.shape[1:] + source.shape[1:]."""
        self._start_use()
        unconnected = UnconnectedGradients.check(unconnected_gradients)
        target = convert_to_tensor(target)
        t_shape, s_shape = target.shape.as_list(), source.shape.as_list()
        if not t_shape or not s_shape or t_shape[0] != s_shape[0]:
            raise ValueError(f"Need first dimension of target shape ({target.shape}) and source shape "
                             f"({source.shape}) to match.")
        batch = t_shape[0]
        per_example = int(np.prod(t_shape[1:]))
        columns = []
        for j in range(per_example):
            seed = _batch_one_hot(target, j)
            g = self._compute([target], [source], [seed], UnconnectedGradients.ZERO)[0]
            columns.append(convert_to_tensor(g))
        shape = [batch] + t_shape[1:] + s_shape[1:]
        if per_example == 0:
            result = array_ops.zeros(shape, dtype=source.dtype.base_dtype)
        else:
            stacked = array_ops.stack(columns, axis=1)  # [batch, per_example, source dims...]
            result = array_ops.reshape(stacked, shape)
        if unconnected == UnconnectedGradients.NONE and not _connected(self._tape, target, source):
            result = None
        self._finish_use()
        return result


def _one_hot_like(target: Any, index: int) -> Any:
    n = int(np.prod(target.shape.as_list()))
    seed = np.zeros([n], target.dtype.base_dtype.as_numpy_dtype)
    seed[index] = 1
    return convert_to_tensor(seed.reshape(target.shape.as_list()))


def _batch_one_hot(target: Any, column: int) -> Any:
    dims = target.shape.as_list()
    seed = np.zeros([dims[0], int(np.prod(dims[1:]))], target.dtype.base_dtype.as_numpy_dtype)
    seed[:, column] = 1
    return convert_to_tensor(seed.reshape(dims))


def _trainable_variable(x: Any) -> bool:
    return bool(getattr(x, "trainable", False)) and hasattr(x, "assign")


def _is_variable(x: Any) -> bool:
    return getattr(x, "_eager_variable", False)


def _connected(tape: Any, target: Any, source: Any) -> bool:
    """Whether the tape recorded a path from `source` to `target`."""
    if tape is None:
        return False
    reached = {id(source)}
    for rec in tape.records:
        if any(id(x) in reached for x in rec.inputs):
            reached.update(id(o) for o in rec.outputs)
    return id(target) in reached


def _backprop(tape: _tape.Tape, targets: list[Any], sources: list[Any],
              output_gradients: Optional[list[Any]], unconnected: str) -> list[Any]:
    """Walks the tape's records backwards from the targets (module docstring)."""
    grads: dict[int, list[Any]] = {}
    for i, y in enumerate(targets):
        gy = None if output_gradients is None else output_gradients[i]
        if gy is None:
            if not tape.is_tracked(y):
                continue
            gy = array_ops.ones_like(y)
        elif not isinstance(gy, IndexedSlices):
            gy = convert_to_tensor(gy, dtype=y.dtype.base_dtype)
        grads.setdefault(id(y), []).append(gy)
    source_ids = {id(s) for s in sources}
    graph = get_default_graph()
    for rec in reversed(tape.records):
        out_grads = [aggregate_gradients(grads.pop(id(o), None) if id(o) not in source_ids else grads.get(id(o)))
                     for o in rec.outputs]
        if all(g is None for g in out_grads):
            continue
        if rec.op_def is None:  # a variable read: its gradient is the variable's
            grads.setdefault(id(rec.inputs[0]), []).append(out_grads[0])
            continue
        _backprop_record(graph, rec, out_grads, grads)
    results = []
    for s in sources:
        g = aggregate_gradients(grads.get(id(s)))
        if g is None and unconnected == UnconnectedGradients.ZERO:
            g = array_ops.zeros(s.shape.as_list(), dtype=s.dtype.base_dtype)
        results.append(g)
    return results


def _backprop_record(graph: Any, rec: _tape.Record, out_grads: list[Any], grads: dict[int, list[Any]]) -> None:
    op = EagerOperation(graph, rec.op_def, rec.inputs, rec.attrs, list(rec.outputs))
    fn = gradient_function(op)
    if fn is NOT_DIFFERENTIABLE:
        return
    if fn is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}).")
    filled = []
    for t, g in zip(rec.outputs, out_grads):
        if g is None and len(rec.outputs) > 1 and t.dtype.base_dtype.is_floating:
            g = array_ops.zeros_like(t)
        filled.append(g)
    in_grads = fn(op, *filled)
    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(rec.inputs):
        raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.type} do not match num "
                         f"inputs {len(rec.inputs)}")
    for t, g in input_gradients(rec.inputs, in_grads, rec.op_def.registration.broadcasts):
        grads.setdefault(id(t), []).append(g)
