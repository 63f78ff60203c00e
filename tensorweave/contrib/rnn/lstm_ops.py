"""`tf.contrib.rnn.LSTMBlockCell`: TF's fused-kernel LSTM, here composed from existing ops with
the same arithmetic and variables (`lstm_cell/kernel` [input + units, 4 units] with the gates in
the order i, cs, f, o; `lstm_cell/bias`; with use_peephole `w_i_diag`, `w_f_diag`, `w_o_diag`)."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.ops.array import concat, split
from tensorweave.ops.linalg import matmul
from tensorweave.ops.math import clip_by_value, sigmoid, tanh
from tensorweave.ops.nn import bias_add
from tensorweave.ops.nn.rnn_cell import LSTMStateTuple, RNNCell
from tensorweave.ops.state import zeros_initializer

__all__ = ["LSTMBlockCell"]


class LSTMBlockCell(RNNCell):
    """LSTM (no projection) with forget_bias added to the forget gate, optional cell clipping
    (cell_clip > 0) and optional peephole connections; the state is LSTMStateTuple(c, h)."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: Optional[float] = None,
                 use_peephole: bool = False, dtype: Any = None, reuse: Any = None, name: str = "lstm_cell") -> None:
        super().__init__(reuse, name, dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        # TF's kernel takes -1 for "no clipping" and clips only with a positive bound.
        self._cell_clip = cell_clip if cell_clip is not None else -1
        self._use_peephole = use_peephole

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_units

    def call(self, inputs: Any, state: Any, dtype: Any) -> tuple[Any, Any]:
        n = self._num_units
        depth = inputs.get_shape()[-1].value
        if depth is None:
            raise ValueError(f"Expecting inputs with a known last dimension, got shape {inputs.get_shape()}")
        cs_prev, h_prev = state
        kernel = self._variable("kernel", [depth + n, 4 * n], dtype)
        bias = self._variable("bias", [4 * n], dtype, zeros_initializer())
        if self._use_peephole:
            wci = self._variable("w_i_diag", [n], dtype)
            wcf = self._variable("w_f_diag", [n], dtype)
            wco = self._variable("w_o_diag", [n], dtype)
        i, ci, f, o = split(bias_add(matmul(concat([inputs, h_prev], 1), kernel), bias), 4, axis=1)
        if self._use_peephole:
            i = i + cs_prev * wci
            f = f + cs_prev * wcf
        cs = tanh(ci) * sigmoid(i) + cs_prev * sigmoid(f + self._forget_bias)
        if self._cell_clip > 0:
            cs = clip_by_value(cs, -self._cell_clip, self._cell_clip)
        if self._use_peephole:
            o = o + cs * wco
        h = tanh(cs) * sigmoid(o)
        return h, LSTMStateTuple(cs, h)
