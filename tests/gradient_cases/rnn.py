"""Gradient-check cases for RNNs: tf.nn.dynamic_rnn runs its cell in a while loop over
TensorArrays, so these cases check the whole backward loop (stacks, invariant accumulators,
gradient TensorArrays) against central differences, with respect to the inputs and the initial
state. The cells' weights come from seeded initializers (the checker runs the initializers)."""
import tensorweave as tf
from tests.gradient_cases import GradCase

LOOP_OPS = ("Enter", "Exit", "NextIteration", "Switch", "Merge", "TensorArrayScatterV3", "TensorArrayReadV3",
            "TensorArrayWriteV3", "TensorArrayGatherV3")


def _lstm(x, c0, h0):
    with tf.variable_scope("lstm", initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=11)):
        cell = tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True)
        outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=tf.nn.rnn_cell.LSTMStateTuple(c0, h0))
    return tf.concat([tf.reshape(outputs, [2, -1]), state.c], 1)


def _gru_sequence_length(x):
    with tf.variable_scope("gru", initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=12)):
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.BasicRNNCell(3)])
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2], dtype=tf.float64, time_major=False)
    return tf.reduce_sum(outputs * outputs, 1) + state[1]


CASES = [
    GradCase("dynamic_rnn_lstm", LOOP_OPS, _lstm, [(2, 4, 2), (2, 3), (2, 3)]),
    GradCase("dynamic_rnn_gru_sequence_length", LOOP_OPS, _gru_sequence_length, [(2, 4, 3)]),
]
