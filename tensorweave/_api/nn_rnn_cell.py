"""`tf.nn.rnn_cell`: the RNN cell classes (re-exports only; they live in ops/nn/rnn_cell.py)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.ops.nn.rnn_cell import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell)

__getattr__ = _module_getattr("nn.rnn_cell", "tensorweave.nn.rnn_cell")
