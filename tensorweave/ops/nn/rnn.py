"""`tf.nn.dynamic_rnn` (the cell run by a while_loop over time, inputs and outputs in
TensorArrays: white paper 4.4, OSDI 3.4) and `tf.nn.static_rnn` (the cell unrolled in the graph).

With `sequence_length`, rows whose sequence has ended output zeros and carry their last state
through (TF's copy-through), and the loop stops after the longest sequence."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array.creation import zeros, zeros_like
from tensorweave.ops.array.joining import concat, stack, unstack
from tensorweave.ops.array.reverse_sequence import reverse_sequence
from tensorweave.ops.array.shaping import identity, shape
from tensorweave.ops.array.slicing import reverse
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.math_impl import where
from tensorweave.ops.math.elementwise import maximum, minimum
from tensorweave.ops.math.reduction import reduce_max
from tensorweave.framework import nest
from tensorweave.ops.control_flow.tensor_array import TensorArray
from tensorweave.ops.control_flow.while_loop import while_loop
from tensorweave.ops.state.variable_scope import variable_scope

__all__ = ["dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn", "static_bidirectional_rnn"]


def _check_cell(cell: Any) -> None:
    for attr in ("output_size", "state_size", "zero_state"):
        if not hasattr(cell, attr):
            raise TypeError(f"The argument 'cell' ({cell!r}) is not an RNNCell: '{attr}' property is missing.")
    if not callable(cell):
        raise TypeError(f"The argument 'cell' ({cell!r}) is not an RNNCell: it is not callable.")


def _initial_state(cell: Any, initial_state: Any, batch_size: Any, dtype: Any) -> Any:
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _sequence_length(sequence_length: Any) -> Any:
    if sequence_length is None:
        return None
    sequence_length = cast(convert_to_tensor(sequence_length), "int32")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but saw shape: "
                         f"{sequence_length.shape}")
    return identity(sequence_length, name="sequence_length")


def _copy_through(finished: Any, zero_outputs: list[Any], output: Any, state: Any, new_state: Any) -> tuple:
    """Rows whose sequence has ended (finished[b]) output zeros and keep their state."""
    flat_out = [where(finished, z, o) for z, o in zip(zero_outputs, nest.flatten(output))]
    flat_state = [where(finished, old, new) for old, new in zip(nest.flatten(state), nest.flatten(new_state))]
    return _pack(output, flat_out), _pack(new_state, flat_state)


def _pack(structure: Any, flat: list[Any]) -> Any:
    return nest.pack_sequence_as(structure, flat) if nest.is_sequence(structure) else flat[0]


def _transpose_batch_time(x: Any) -> Any:
    """[batch, time, ...] <-> [time, batch, ...]."""
    ndims = x.shape.ndims
    if ndims is None or ndims < 2:
        raise ValueError(f"RNN inputs must have rank >= 2 ([batch, time, ...] or [time, batch, ...]), got {x.shape}")
    return transpose(x, [1, 0] + list(range(2, ndims)))


def _state_dtype(dtype: Any, state: Any) -> Any:
    return dtype if dtype is not None else nest.flatten(state)[0].dtype.base_dtype


def dynamic_rnn(cell: Any, inputs: Any, sequence_length: Any = None, initial_state: Any = None,
                dtype: Any = None, parallel_iterations: Optional[int] = None, swap_memory: bool = False,
                time_major: bool = False, scope: Any = None) -> tuple[Any, Any]:
    """Runs `cell` over the time dimension of `inputs` ([batch, time, depth], or [time, batch,
    depth] with time_major; or a nested structure of such) in a while loop.

    Returns (outputs, state): outputs shaped like the inputs' first two dimensions followed by
    cell.output_size, and the final state (for each row, the state at its sequence_length)."""
    _check_cell(cell)
    with variable_scope(scope or "rnn"):
        flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not flat_inputs:
            raise ValueError("inputs must not be empty")
        if not time_major:
            flat_inputs = [_transpose_batch_time(x) for x in flat_inputs]
        elif any(x.shape.ndims is not None and x.shape.ndims < 2 for x in flat_inputs):
            raise ValueError("time-major RNN inputs must have rank >= 2 ([time, batch, ...])")
        sequence_length = _sequence_length(sequence_length)
        first = flat_inputs[0]
        static_batch = first.shape[1].value if first.shape.ndims else None
        batch = static_batch if static_batch is not None else shape(first)[1]
        state = _initial_state(cell, initial_state, batch, dtype)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, flat_inputs, state, sequence_length,
                                                 _state_dtype(dtype, state), parallel_iterations or 32,
                                                 swap_memory)
        if not time_major:
            outputs = _pack(outputs, [_transpose_batch_time(o) for o in nest.flatten(outputs)])
        return outputs, final_state


def _dynamic_rnn_loop(cell: Any, inputs: Any, flat_inputs: list[Any], state: Any, sequence_length: Any,
                      dtype: Any, parallel_iterations: int, swap_memory: bool) -> tuple[Any, Any]:
    first = flat_inputs[0]
    steps = shape(first)[0]
    static_steps = first.shape[0].value if first.shape.ndims else None
    static_batch = first.shape[1].value if first.shape.ndims else None
    batch = static_batch if static_batch is not None else shape(first)[1]
    input_tas = [TensorArray(x.dtype, size=steps, element_shape=x.shape[1:], name=f"input_{i}").unstack(x)
                 for i, x in enumerate(flat_inputs)]
    out_sizes = [TensorShape([static_batch]).concatenate(TensorShape(s if isinstance(s, (list, tuple)) else [s]))
                 for s in nest.flatten(cell.output_size)]
    output_tas = [TensorArray(dtype, size=steps, element_shape=s, name=f"output_{i}") for i, s in enumerate(out_sizes)]
    n_out = len(output_tas)
    bound = steps
    if sequence_length is not None:
        # No cell runs after the longest sequence (the outputs there stay zero).
        bound = minimum(steps, maximum(1, reduce_max(sequence_length)))
        zero_outputs = [zeros(stack([batch] + s.as_list()[1:]) if static_batch is None
                              else s.as_list(), dtype) for s in out_sizes]

    def body(t: Any, *loop_vars: Any) -> Any:
        out_tas, state_flat = loop_vars[:n_out], loop_vars[n_out:]
        prev = _pack(state, list(state_flat))
        x_t = _pack(inputs, [ta.read(t) for ta in input_tas])
        output, new_state = cell(x_t, prev)
        if sequence_length is not None:
            output, new_state = _copy_through(t >= sequence_length, zero_outputs, output, prev, new_state)
        out_tas = tuple(ta.write(t, o) for ta, o in zip(out_tas, nest.flatten(output)))
        return (t + 1,) + out_tas + tuple(nest.flatten(new_state))

    results = while_loop(lambda t, *_: t < bound, body,
                         (convert_to_tensor(0, name="time"),) + tuple(output_tas) + tuple(nest.flatten(state)),
                         parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                         return_same_structure=True)
    stacked = []
    for ta, size in zip(results[1:1 + n_out], out_sizes):
        out = ta.stack()
        out.set_shape(TensorShape([static_steps]).concatenate(size))
        stacked.append(out)
    return _pack(cell.output_size, stacked), _pack(state, list(results[1 + n_out:]))


def static_rnn(cell: Any, inputs: Sequence[Any], initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """The cell unrolled over a Python list of [batch, depth] inputs (one set of variables for
    every step); returns (outputs, state)."""
    _check_cell(cell)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "rnn"):
        first = convert_to_tensor(nest.flatten(inputs[0])[0])
        batch = first.shape[0].value if first.shape.ndims else None
        state = _initial_state(cell, initial_state, batch if batch is not None else shape(first)[0],
                               dtype)
        sequence_length = _sequence_length(sequence_length)
        outputs = []
        for t, x in enumerate(inputs):
            output, new_state = cell(x, state)
            if sequence_length is not None:
                zero = [zeros_like(o) for o in nest.flatten(output)]
                output, new_state = _copy_through(t >= sequence_length, zero, output, state, new_state)
            outputs.append(output)
            state = new_state
        return outputs, state


def _reverse_steps(steps: Sequence[Any], sequence_length: Any) -> list[Any]:
    """A Python list of time steps reversed: the whole list, or each row within its own length
    (the steps past a row's length stay where they are)."""
    if sequence_length is None:
        return list(reversed(steps))
    columns = []
    for component in zip(*(nest.flatten(step) for step in steps)):
        known = TensorShape(None)
        for x in component:
            known = known.merge_with(convert_to_tensor(x).shape)
        flipped = unstack(reverse_sequence(stack(component), sequence_length, seq_axis=0, batch_axis=1))
        for x in flipped:
            x.set_shape(known)
        columns.append(flipped)
    return [_pack(step, [column[t] for column in columns]) for t, step in enumerate(steps)]


def static_bidirectional_rnn(cell_fw: Any, cell_bw: Any, inputs: Sequence[Any], initial_state_fw: Any = None,
                             initial_state_bw: Any = None, dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Any], Any, Any]:
    """static_rnn forwards (bidirectional_rnn/fw) and over the reversed steps (bidirectional_rnn/bw,
    each row reversed within its sequence_length); each step's output is the forward and backward
    outputs concatenated on the last axis.

    Returns (outputs, output_state_fw, output_state_bw)."""
    _check_cell(cell_fw)
    _check_cell(cell_bw)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                             scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_bw, state_bw = static_rnn(cell_bw, _reverse_steps(inputs, sequence_length), initial_state_bw,
                                               dtype, sequence_length, scope=bw_scope)
    output_bw = _reverse_steps(reversed_bw, sequence_length)
    outputs = [_pack(fw, [concat([a, b], 1) for a, b in zip(nest.flatten(fw), nest.flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def _reverse_time(x: Any, sequence_length: Any, time_axis: int, batch_axis: int) -> Any:
    if sequence_length is not None:
        return reverse_sequence(x, sequence_length, seq_axis=time_axis, batch_axis=batch_axis)
    return reverse(x, axis=[time_axis])


def bidirectional_dynamic_rnn(cell_fw: Any, cell_bw: Any, inputs: Any, sequence_length: Any = None,
                              initial_state_fw: Any = None, initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: Optional[int] = None, swap_memory: bool = False,
                              time_major: bool = False, scope: Any = None) -> tuple[Any, Any]:
    """A forward and a backward dynamic_rnn over `inputs` (variables under
    bidirectional_rnn/fw and bidirectional_rnn/bw); the backward one reads each row reversed
    within its sequence_length, and its outputs are reversed back.

    Returns ((output_fw, output_bw), (output_state_fw, output_state_bw))."""
    _check_cell(cell_fw)
    _check_cell(cell_bw)
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse_all(structure: Any) -> Any:
        return _pack(structure, [_reverse_time(convert_to_tensor(x), sequence_length, time_axis, batch_axis)
                                 for x in nest.flatten(structure)])

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                                              parallel_iterations, swap_memory, time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_outputs, state_bw = dynamic_rnn(cell_bw, reverse_all(inputs), sequence_length,
                                                     initial_state_bw, dtype, parallel_iterations, swap_memory,
                                                     time_major, scope=bw_scope)
    return (output_fw, reverse_all(reversed_outputs)), (state_fw, state_bw)

