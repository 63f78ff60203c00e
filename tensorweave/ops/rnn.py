"""`tf.nn.dynamic_rnn` (a while_loop over time with TensorArrays, white paper 4.4) and
`tf.nn.static_rnn` (the cell unrolled in the graph)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.control_flow import nest
from tensorweave.ops.control_flow.tensor_array import TensorArray
from tensorweave.ops.control_flow.while_loop import while_loop
from tensorweave.ops.variable_scope import variable_scope

__all__ = ["dynamic_rnn", "static_rnn"]


def _initial_state(cell: Any, initial_state: Any, batch_size: Any, dtype: Any) -> Any:
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _select_past_end(time: Any, sequence_length: Any, new: Any, old: Any, zero_output: bool) -> Any:
    """Rows whose sequence has ended keep their state and output zeros (TF's _rnn_step)."""
    from tensorweave.ops import array_ops, math_ops
    still = math_ops.less(time, sequence_length)
    flat_new, flat_old = nest.flatten(new), nest.flatten(old)
    out = []
    for n, o in zip(flat_new, flat_old):
        fallback = array_ops.zeros_like(n) if zero_output else o
        out.append(math_ops.where(still, n, fallback))
    return nest.pack_sequence_as(new, out) if nest.is_sequence(new) else out[0]


def dynamic_rnn(cell: Any, inputs: Any, sequence_length: Any = None, initial_state: Any = None,
                dtype: Any = None, parallel_iterations: Optional[int] = None, swap_memory: bool = False,
                time_major: bool = False, scope: Any = None) -> tuple[Any, Any]:
    """Runs `cell` over the time dimension of `inputs` in a while loop; returns (outputs, state)."""
    from tensorweave.ops import array_ops, math_ops
    with variable_scope(scope or "rnn"):
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims < 3:
            raise ValueError(f"inputs must be [batch, time, depth] (or time-major), got shape {inputs.shape}")
        if not time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        steps = array_ops.shape(inputs)[0]
        batch = array_ops.shape(inputs)[1]
        static_batch = inputs.shape[1].value if inputs.shape.ndims else None
        state = _initial_state(cell, initial_state, static_batch or batch, dtype or inputs.dtype.base_dtype)
        if sequence_length is not None:
            sequence_length = math_ops.to_int32(convert_to_tensor(sequence_length))
        input_ta = TensorArray(inputs.dtype, size=steps, element_shape=inputs.shape[1:]).unstack(inputs)
        output_ta = TensorArray(inputs.dtype, size=steps)

        def body(t: Any, out_ta: Any, *state_flat: Any) -> Any:
            prev = nest.pack_sequence_as(state, list(state_flat)) if nest.is_sequence(state) else state_flat[0]
            output, new_state = cell(input_ta.read(t), prev)
            if sequence_length is not None:
                output = _select_past_end(t, sequence_length, output, output, zero_output=True)
                new_state = _select_past_end(t, sequence_length, new_state, prev, zero_output=False)
            return (t + 1, out_ta.write(t, output)) + tuple(nest.flatten(new_state))

        results = while_loop(lambda t, *_: t < steps, body,
                             (convert_to_tensor(0), output_ta) + tuple(nest.flatten(state)),
                             parallel_iterations=parallel_iterations or 32, swap_memory=swap_memory,
                             return_same_structure=True)
        outputs = results[1].stack()
        final = nest.pack_sequence_as(state, list(results[2:])) if nest.is_sequence(state) else results[2]
        if not time_major:
            outputs = array_ops.transpose(outputs, [1, 0, 2])
        return outputs, final


def static_rnn(cell: Any, inputs: Sequence[Any], initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """The cell unrolled over a Python list of [batch, depth] inputs; returns (outputs, state)."""
    from tensorweave.ops import array_ops, math_ops
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("inputs must be a non-empty list of tensors")
    with variable_scope(scope or "rnn"):
        first = convert_to_tensor(inputs[0])
        batch = first.shape[0].value if first.shape.ndims else None
        state = _initial_state(cell, initial_state, batch if batch is not None else array_ops.shape(first)[0],
                               dtype or first.dtype.base_dtype)
        if sequence_length is not None:
            sequence_length = math_ops.to_int32(convert_to_tensor(sequence_length))
        outputs = []
        for t, x in enumerate(inputs):
            output, new_state = cell(x, state)
            if sequence_length is not None:
                output = _select_past_end(t, sequence_length, output, output, zero_output=True)
                new_state = _select_past_end(t, sequence_length, new_state, state, zero_output=False)
            outputs.append(output)
            state = new_state
        return outputs, state
