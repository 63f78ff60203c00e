"""Recurrent cells (`tf.nn.rnn_cell`): BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell,
MultiRNNCell and DropoutWrapper, with TensorFlow's variable names (`<scope>/basic_lstm_cell/kernel`,
`.../gates/kernel`, ...) so checkpoints line up. A cell creates its variables on its first call
and reuses them on every later call (one set of weights for all time steps)."""
from __future__ import annotations

import collections
import hashlib
import re
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.creation import zeros
from tensorweave.ops.array.joining import concat, split
from tensorweave.ops.array.slicing import slice as array_slice
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.math.select import clip_by_value
from tensorweave.ops.math.elementwise import divide, floor, sigmoid, tanh
from tensorweave.ops.nn.nn_impl import dropout
from tensorweave.ops.nn.nn_ops import bias_add
from tensorweave.ops.random.draws import random_uniform
from tensorweave.ops.state import init_ops
from tensorweave.framework import nest
from tensorweave.ops.state.variable_scope import get_variable, variable_scope

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "DropoutWrapper", "LSTMStateTuple"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """(c, h): the memory cell and the output of an LSTM."""

    __slots__ = ()

    @property
    def dtype(self) -> Any:
        return self.c.dtype


def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("l_s_t_m", "lstm").replace(
        "g_r_u", "gru").replace("r_n_n", "rnn")


class RNNCell:
    """Base class: `output, new_state = cell(inputs, state)`."""

    def __init__(self, reuse: Any = None, name: Optional[str] = None, dtype: Any = None) -> None:
        self._name = name or _snake_case(type(self).__name__)
        self._reuse = reuse
        self._dtype = dtype
        self._built = False
        self._variables: dict[str, Any] = {}

    @property
    def state_size(self) -> Any:
        raise TypeError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self) -> Any:
        raise TypeError(f"{type(self).__name__} must define output_size")

    @property
    def variables(self) -> list[Any]:
        return list(self._variables.values())

    trainable_variables = variables
    weights = variables

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with _graph.name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            flat = [zeros([batch_size, s], dtype) for s in nest.flatten(self.state_size)]
            return nest.pack_sequence_as(self.state_size, flat) if nest.is_sequence(self.state_size) else flat[0]

    def _variable(self, name: str, shape: Sequence[int], dtype: Any, initializer: Any = None) -> Any:
        if name not in self._variables:
            self._variables[name] = get_variable(name, shape, dtype=dtype, initializer=initializer)
        return self._variables[name]

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        inputs = convert_to_tensor(inputs)
        dtype = self._dtype or inputs.dtype.base_dtype
        with variable_scope(scope or self._name, reuse=True if self._built else self._reuse):
            result = self.call(inputs, state, dtype)
        self._built = True
        return result

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        raise TypeError(f"{type(self).__name__} must define call")


def _depth(inputs: Any) -> int:
    depth = inputs.shape[-1].value if inputs.shape.ndims else None
    if depth is None:
        raise ValueError(f"The last dimension of the inputs to an RNN cell must be known: {inputs.shape}")
    return depth


def _concat_matmul(parts: Sequence[Any], kernel: Any, bias: Any) -> Any:
    return bias_add(matmul(concat(list(parts), 1), kernel), bias)


class _SingleStateCell(RNNCell):
    """A cell whose state is its output, num_units wide."""

    _num_units: int

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units


class BasicRNNCell(_SingleStateCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units: int, activation: Optional[Callable] = None, reuse: Any = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units = num_units
        self._activation = activation

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        kernel = self._variable("kernel", [_depth(inputs) + self._num_units, self._num_units], dtype)
        bias = self._variable("bias", [self._num_units], dtype, init_ops.zeros_initializer())
        out = (self._activation or tanh)(_concat_matmul([inputs, state], kernel, bias))
        return out, out


class BasicLSTMCell(RNNCell):
    """LSTM (Hochreiter & Schmidhuber) with TF's gate order i, j, f, o and forget_bias."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Optional[Callable] = None, reuse: Any = None, name: Optional[str] = None,
                 dtype: Any = None) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units, self._forget_bias = num_units, forget_bias
        self._state_is_tuple, self._activation = state_is_tuple, activation

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        n = self._num_units
        c, h = state if self._state_is_tuple else split(state, 2, axis=1)
        kernel = self._variable("kernel", [_depth(inputs) + n, 4 * n], dtype)
        bias = self._variable("bias", [4 * n], dtype, init_ops.zeros_initializer())
        i, j, f, o = split(_concat_matmul([inputs, h], kernel, bias), 4, axis=1)
        act = self._activation or tanh
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * act(j)
        new_h = act(new_c) * sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """LSTM with optional peepholes, cell clipping and an output projection (TF's LSTMCell)."""

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: Optional[float] = None,
                 initializer: Any = None, num_proj: Optional[int] = None, proj_clip: Optional[float] = None,
                 num_unit_shards: Any = None, num_proj_shards: Any = None, forget_bias: float = 1.0,
                 state_is_tuple: bool = True, activation: Optional[Callable] = None, reuse: Any = None,
                 name: Optional[str] = None, dtype: Any = None) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units, self._use_peepholes, self._cell_clip = num_units, use_peepholes, cell_clip
        self._initializer, self._num_proj, self._proj_clip = initializer, num_proj, proj_clip
        self._forget_bias, self._state_is_tuple, self._activation = forget_bias, state_is_tuple, activation

    @property
    def state_size(self) -> Any:
        out = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, out) if self._state_is_tuple else self._num_units + out

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        n, out_size = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = array_slice(state, [0, 0], [-1, n]), array_slice(state, [0, n], [-1, out_size])
        kernel = self._variable("kernel", [_depth(inputs) + out_size, 4 * n], dtype, self._initializer)
        bias = self._variable("bias", [4 * n], dtype, init_ops.zeros_initializer())
        i, j, f, o = split(_concat_matmul([inputs, m_prev], kernel, bias), 4, axis=1)
        act = self._activation or tanh
        if self._use_peepholes:
            w_f = self._variable("w_f_diag", [n], dtype, self._initializer)
            w_i = self._variable("w_i_diag", [n], dtype, self._initializer)
            w_o = self._variable("w_o_diag", [n], dtype, self._initializer)
            c = (sigmoid(f + self._forget_bias + w_f * c_prev) * c_prev
                 + sigmoid(i + w_i * c_prev) * act(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        m = sigmoid(o + w_o * c) * act(c) if self._use_peepholes else sigmoid(o) * act(c)
        if self._num_proj is not None:
            if "projection/kernel" not in self._variables:
                with variable_scope("projection"):
                    self._variables["projection/kernel"] = get_variable(
                        "kernel", [n, self._num_proj], dtype=dtype, initializer=self._initializer)
            proj = self._variables["projection/kernel"]
            m = matmul(m, proj)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state


class GRUCell(_SingleStateCell):
    """Gated recurrent unit (Cho et al.), with TF's `gates` and `candidate` sub-scopes."""

    def __init__(self, num_units: int, activation: Optional[Callable] = None, reuse: Any = None,
                 kernel_initializer: Any = None, bias_initializer: Any = None, name: Optional[str] = None,
                 dtype: Any = None) -> None:
        super().__init__(reuse, name, dtype)
        self._num_units, self._activation = num_units, activation
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    def _scoped(self, scope: str, shape_in: int, width: int, dtype: Any, bias_init: Any) -> tuple[Any, Any]:
        key = f"{scope}/kernel"
        if key not in self._variables:
            with variable_scope(scope):
                self._variables[key] = get_variable("kernel", [shape_in, width], dtype=dtype,
                                                    initializer=self._kernel_initializer)
                self._variables[f"{scope}/bias"] = get_variable(
                    "bias", [width], dtype=dtype, initializer=self._bias_initializer or bias_init)
        return self._variables[key], self._variables[f"{scope}/bias"]

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        n = self._num_units
        depth = _depth(inputs) + n
        gate_kernel, gate_bias = self._scoped("gates", depth, 2 * n, dtype, init_ops.constant_initializer(1.0))
        r, u = split(sigmoid(_concat_matmul([inputs, state], gate_kernel, gate_bias)), 2, axis=1)
        cand_kernel, cand_bias = self._scoped("candidate", depth, n, dtype, init_ops.zeros_initializer())
        c = (self._activation or tanh)(_concat_matmul([inputs, r * state], cand_kernel, cand_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: each layer's output is the next one's input. With
    state_is_tuple=False the layers' states are concatenated along dimension 1."""

    def __init__(self, cells: Sequence[RNNCell], state_is_tuple: bool = True) -> None:
        super().__init__(None, None, None)
        if not isinstance(cells, (list, tuple)):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells!r}.")
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set. "
                             f"State sizes are: {[c.state_size for c in self._cells]}")

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self) -> Any:
        return self._cells[-1].output_size

    @property
    def variables(self) -> list[Any]:
        return [v for c in self._cells for v in c.variables]

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        if self._state_is_tuple:
            return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
        return super().zero_state(batch_size, dtype)

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        new_states = []
        current, position = inputs, 0
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    layer_state = state[i]
                else:
                    layer_state = array_slice(state, [0, position], [-1, cell.state_size])
                    position += cell.state_size
                current, s = cell(current, layer_state)
            new_states.append(s)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, concat(new_states, 1)


def _lstm_filter(substate: Any) -> Any:
    """TF's default state filter: of an LSTM state only h is dropped out, never the memory c."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _seed_for(seed: Optional[int], prefix: str, index: int) -> Optional[int]:
    """TF's per-tensor dropout seeds derived from the wrapper's seed."""
    if seed is None:
        return None
    digest = hashlib.md5(f"{seed}{prefix}_{index}".encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs, outputs and state (keep probabilities). With
    variational_recurrent=True one mask, drawn once per step of the session run and shared by
    every time step and batch row, is used for each of inputs, state and outputs (Gal and
    Ghahramani); this needs dtype, and input_size when inputs are dropped."""

    def __init__(self, cell: RNNCell, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False, input_size: Any = None,
                 dtype: Any = None, seed: Optional[int] = None,
                 dropout_state_filter_visitor: Optional[Callable] = None) -> None:
        super().__init__(None, None, dtype)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        for label, p in (("input", input_keep_prob), ("state", state_keep_prob), ("output", output_keep_prob)):
            if isinstance(p, (int, float)) and not 0.0 <= p <= 1.0:
                raise ValueError(f"Parameter {label}_keep_prob must be between 0 and 1: {p}")
        self._cell = cell
        self._keep = {"input": input_keep_prob, "state": state_keep_prob, "output": output_keep_prob}
        self._seed = seed
        self._filter = dropout_state_filter_visitor or _lstm_filter
        self._noise: dict[str, Any] = {}
        if variational_recurrent:
            self._noise = self._recurrent_noise(input_size, dtype)

    def _recurrent_noise(self, input_size: Any, dtype: Any) -> dict[str, Any]:
        if dtype is None:
            raise ValueError("When variational_recurrent=True, dtype must be provided")
        sizes = {"state": self._cell.state_size, "output": self._cell.output_size}
        if self._should_drop(self._keep["input"]):
            if input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                 "input_size must be provided")
            sizes["input"] = input_size
        noise = {}
        for kind, size in sizes.items():
            flat = nest.flatten(size)
            noise[kind] = [random_uniform([1] + (list(s) if isinstance(s, (list, tuple)) else [s]), dtype=dtype,
                                          seed=_seed_for(self._seed, kind, i)) for i, s in enumerate(flat)]
        return noise

    @property
    def wrapped_cell(self) -> RNNCell:
        return self._cell

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> Any:
        return self._cell.output_size

    @property
    def variables(self) -> list[Any]:
        return self._cell.variables

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with _graph.name_scope(f"{type(self).__name__}ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    @staticmethod
    def _should_drop(keep: Any) -> bool:
        return not isinstance(keep, (int, float)) or keep < 1.0

    def _drop(self, values: Any, kind: str, mask: Any = True) -> Any:
        keep = self._keep[kind]
        if not self._should_drop(keep):
            return values
        flat, masks = nest.flatten(values), _flat_mask(mask, values)
        out = []
        for i, (v, do) in enumerate(zip(flat, masks)):
            if not do:
                out.append(v)
            elif kind in self._noise:
                kept = floor(keep + self._noise[kind][i])   # 1 with probability keep
                out.append(divide(v, keep) * kept)
            else:
                out.append(dropout(v, keep_prob=keep, seed=_seed_for(self._seed, kind, i)))
        return nest.pack_sequence_as(values, out) if nest.is_sequence(values) else out[0]

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        inputs = self._drop(inputs, "input")
        output, new_state = self._cell(inputs, state, scope)
        new_state = self._drop(new_state, "state", _state_mask(self._filter, new_state))
        return self._drop(output, "output"), new_state


def _state_mask(visitor: Callable, state: Any) -> Any:
    """The filter applied to each top-level part of the state (TF's shallow traversal)."""
    if isinstance(state, LSTMStateTuple) or not nest.is_sequence(state):
        return visitor(state)
    return type(state)(_state_mask(visitor, s) for s in state) if not isinstance(state, dict) else \
        {k: _state_mask(visitor, v) for k, v in state.items()}


def _flat_mask(mask: Any, values: Any) -> list[bool]:
    """One flag per flattened value: a bool applies to the whole sub-structure it stands for."""
    if isinstance(mask, bool):
        return [mask] * len(nest.flatten(values))
    flags: list[bool] = []
    for m, v in zip(mask, values) if not isinstance(mask, dict) else ((mask[k], values[k]) for k in sorted(mask)):
        flags.extend(_flat_mask(m, v))
    return flags
