"""`tf.map_fn`, `tf.foldl`, `tf.foldr` and `tf.scan`, built on while_loop and TensorArray (the
iterations run in the executor's loop frame, not unrolled in Python)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array.shaping import shape
from tensorweave.ops.control_flow.tensor_array import TensorArray
from tensorweave.ops.control_flow.while_loop import while_loop

__all__ = ["map_fn", "foldl", "foldr", "scan"]


def _unstacked(elems_flat: list[Any]) -> tuple[list[TensorArray], Any]:
    n = shape(elems_flat[0])[0]
    static_n = elems_flat[0].shape[0].value if elems_flat[0].shape.ndims else None
    arrays = [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.ndims else None,
                          dynamic_size=False, infer_shape=True).unstack(e) for e in elems_flat]
    return arrays, static_n if static_n is not None else n


def _read_all(arrays: list[TensorArray], i: Any, structure: Any) -> Any:
    return nest.pack_sequence_as(structure, [a.read(i) for a in arrays])


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None, parallel_iterations: int = 10,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: Optional[str] = None) -> Any:
    """Applies fn to each element of elems (unstacked on dimension 0) and stacks the results."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with _graph.name_scope(name, "map", nest.flatten(elems)):
        elems_flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
        arrays, n = _unstacked(elems_flat)
        out_structure = elems if dtype is None else dtype
        out_dtypes = [e.dtype for e in elems_flat] if dtype is None else nest.flatten(dtype)
        outputs = [TensorArray(dt, size=n, dynamic_size=False, infer_shape=infer_shape) for dt in out_dtypes]

        def body(i: Any, *accs: TensorArray) -> Any:
            value = fn(_read_all(arrays, i, elems))
            flat_value = nest.flatten(value)
            if len(flat_value) != len(accs):
                raise ValueError(f"fn returned {len(flat_value)} values but dtype describes {len(accs)}; pass "
                                 "`dtype` when fn's output structure differs from elems'")
            return (i + 1,) + tuple(a.write(i, v) for a, v in zip(accs, flat_value))

        results = while_loop(lambda i, *_: i < n, body, (convert_to_tensor(0),) + tuple(outputs),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, return_same_structure=True)
        stacked = [r.stack() for r in results[1:]]
        return nest.pack_sequence_as(out_structure, stacked)


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any, parallel_iterations: int,
          back_prop: bool, swap_memory: bool, name: Optional[str], reverse: bool, kind: str) -> Any:
    with _graph.name_scope(name, kind, nest.flatten(elems)):
        elems_flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
        arrays, n = _unstacked(elems_flat)
        n = shape(elems_flat[0])[0]
        if initializer is None:
            first = convert_to_tensor(n - 1 if reverse else 0)
            acc = _read_all([TensorArray(e.dtype, size=shape(e)[0], clear_after_read=False).unstack(e)
                             for e in elems_flat], first, elems)
            start = n - 2 if reverse else convert_to_tensor(1)
        else:
            acc = initializer
            start = n - 1 if reverse else convert_to_tensor(0)
        arrays = [TensorArray(e.dtype, size=shape(e)[0], clear_after_read=False).unstack(e) for e in elems_flat]
        acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]

        def body(i: Any, *acc_values: Any) -> Any:
            result = fn(nest.pack_sequence_as(acc, list(acc_values)), _read_all(arrays, i, elems))
            step = i - 1 if reverse else i + 1
            return (step,) + tuple(convert_to_tensor(r) for r in nest.flatten(result))

        def cond(i: Any, *_: Any) -> Any:
            return i >= 0 if reverse else i < n

        results = while_loop(cond, body, (convert_to_tensor(start),) + tuple(acc_flat),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, return_same_structure=True)
        return nest.pack_sequence_as(acc, list(results[1:]))


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, False, "foldl")


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """fn(...fn(fn(initializer, elems[n-1]), elems[n-2])..., elems[0])."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, True, "foldr")


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False,
         name: Optional[str] = None) -> Any:
    """The sequence of accumulated values of foldl (foldr when reverse), stacked."""
    with _graph.name_scope(name, "scan", nest.flatten(elems)):
        elems_flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
        n = shape(elems_flat[0])[0]
        arrays = [TensorArray(e.dtype, size=n, clear_after_read=False).unstack(e) for e in elems_flat]
        if initializer is None:
            first = n - 1 if reverse else convert_to_tensor(0)
            acc = _read_all(arrays, first, elems)
            start = n - 2 if reverse else convert_to_tensor(1)
        else:
            acc = initializer
            start = n - 1 if reverse else convert_to_tensor(0)
        acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]
        outputs = [TensorArray(a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape) for a in acc_flat]
        if initializer is None:
            outputs = [o.write(first, a) for o, a in zip(outputs, acc_flat)]
        k = len(acc_flat)

        def body(i: Any, *state: Any) -> Any:
            acc_values, outs = state[:k], state[k:]
            result = [convert_to_tensor(r) for r in nest.flatten(
                fn(nest.pack_sequence_as(acc, list(acc_values)), _read_all(arrays, i, elems)))]
            outs = tuple(o.write(i, r) for o, r in zip(outs, result))
            return (i - 1 if reverse else i + 1,) + tuple(result) + outs

        def cond(i: Any, *_: Any) -> Any:
            return i >= 0 if reverse else i < n

        results = while_loop(cond, body, (convert_to_tensor(start),) + tuple(acc_flat) + tuple(outputs),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, return_same_structure=True)
        stacked = [o.stack() for o in results[1 + k:]]
        static_n = elems_flat[0].shape[0] if elems_flat[0].shape.ndims else None
        for r in stacked:  # n is a Shape slice here; give the outputs elems' static length as TF does
            if static_n is not None and r.shape.ndims is not None:
                r.set_shape(TensorShape([static_n]).concatenate(r.shape[1:]))
        return nest.pack_sequence_as(acc, stacked)
