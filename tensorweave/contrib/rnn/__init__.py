"""`tf.contrib.rnn`: the tf.nn.rnn_cell cells under their contrib names, static_rnn, and
contrib's LSTMBlockCell and LayerNormBasicLSTMCell (re-exports only)."""
from tensorweave.ops.nn import static_bidirectional_rnn, static_rnn  # noqa: F401
from tensorweave.ops.nn.rnn_cell import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell)
from tensorweave.contrib.rnn.lstm_ops import LSTMBlockCell  # noqa: F401
from tensorweave.contrib.rnn.rnn_cell import LayerNormBasicLSTMCell  # noqa: F401
from tensorweave.contrib._unprovided import unprovided_getattr

__getattr__ = unprovided_getattr("tf.contrib.rnn")
