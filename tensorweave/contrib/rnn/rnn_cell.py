"""`tf.contrib.rnn.LayerNormBasicLSTMCell` (Ba et al., layer normalization in an LSTM, with
recurrent dropout of Semeniuta et al.): TF 1.15's variables `kernel` (and `bias` only without
layer norm), and `gamma`/`beta` under `input`, `transform`, `forget`, `output` and `state`."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.ops.array import concat, split
from tensorweave.ops.linalg import matmul
from tensorweave.ops.math import sigmoid, tanh
from tensorweave.ops.nn import bias_add, dropout
from tensorweave.ops.nn.rnn_cell import LSTMStateTuple, RNNCell
from tensorweave.ops.state import constant_initializer, get_variable, variable_scope
from tensorweave.contrib.layers.layers import layer_norm

__all__ = ["LayerNormBasicLSTMCell"]


class LayerNormBasicLSTMCell(RNNCell):
    """A BasicLSTMCell whose four gate pre-activations and new cell state are layer-normalized
    (gain norm_gain, shift norm_shift at initialization), with dropout on the candidate when
    dropout_keep_prob < 1 (or is a tensor)."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, input_size: Optional[int] = None,
                 activation: Callable = tanh, layer_norm: bool = True, norm_gain: float = 1.0,
                 norm_shift: float = 0.0, dropout_keep_prob: Any = 1.0, dropout_prob_seed: Optional[int] = None,
                 reuse: Any = None) -> None:
        super().__init__(reuse, None, None)
        self._num_units = num_units
        self._activation = activation
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_units

    def _norm(self, inp: Any, scope: str, dtype: Any) -> Any:
        shape = inp.get_shape()[-1:]
        with variable_scope(scope):
            # Created here with the cell's gain and shift, then found by layer_norm (reuse=True).
            self._variables[f"{scope}/gamma"] = get_variable(
                "gamma", shape=shape, initializer=constant_initializer(self._norm_gain), dtype=dtype)
            self._variables[f"{scope}/beta"] = get_variable(
                "beta", shape=shape, initializer=constant_initializer(self._norm_shift), dtype=dtype)
        return layer_norm(inp, reuse=True, scope=scope)

    def _linear(self, args: Any, dtype: Any) -> Any:
        out_size = 4 * self._num_units
        depth = args.get_shape()[-1].value
        out = matmul(args, self._variable("kernel", [depth, out_size], dtype))
        if not self._layer_norm:
            out = bias_add(out, self._variable("bias", [out_size], dtype))
        return out

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        c, h = state
        args = concat([inputs, h], 1)
        i, j, f, o = split(self._linear(args, dtype), 4, axis=1)
        if self._layer_norm:
            i = self._norm(i, "input", dtype)
            j = self._norm(j, "transform", dtype)
            f = self._norm(f, "forget", dtype)
            o = self._norm(o, "output", dtype)
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = dropout(g, self._keep_prob, seed=self._seed)
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state", dtype)
        new_h = self._activation(new_c) * sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)
