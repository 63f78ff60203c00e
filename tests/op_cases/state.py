"""Op cases for variable updates: assignments, scatter updates, count_up_to, and the training
ops every TF1 optimizer applies (dense and sparse gradients). Variables start from constants,
so graph mode and eager mode see the same numbers."""
import numpy as np

import tensorweave as tf
from tests.op_cases import OpCase

_START = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 2.5]], np.float32)
_GRAD = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]], np.float32)


def _variable(value=_START, dtype=None):
    return tf.Variable(np.array(value, dtype=dtype) if dtype else np.array(value), name="v")


def _read_after(update, variable):
    with tf.control_dependencies([update]):
        return variable.read_value()


def _assignments():
    a, b, c = _variable(), _variable(), _variable()
    first = tf.assign(a, _GRAD)
    second = tf.assign_add(b, _GRAD)
    third = tf.assign_sub(c, _GRAD)
    return [first, second, third]


def _scatters():
    indices = tf.constant([2, 0])
    updates = tf.constant(_GRAD[:2])
    return [fn(_variable(), indices, updates) for fn in (tf.scatter_add, tf.scatter_sub, tf.scatter_mul,
                                                         tf.scatter_div, tf.scatter_update)]


def _counters():
    v = _variable(3, np.int32)
    return [tf.count_up_to(v, 10), tf.is_variable_initialized(v)]


_OPTIMIZERS = [
    (lambda: tf.train.GradientDescentOptimizer(0.1), ("ApplyGradientDescent",)),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9), ("ApplyMomentum", "SparseApplyMomentum")),
    (lambda: tf.train.AdagradOptimizer(0.1), ("ApplyAdagrad", "SparseApplyAdagrad")),
    (lambda: tf.train.AdadeltaOptimizer(1.0), ("ApplyAdadelta", "SparseApplyAdadelta")),
    (lambda: tf.train.AdamOptimizer(0.1), ("ApplyAdam",)),
    (lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5), ("ApplyRMSProp", "SparseApplyRMSProp")),
    (lambda: tf.train.RMSPropOptimizer(0.1, centered=True), ("ApplyCenteredRMSProp", "SparseApplyCenteredRMSProp")),
    (lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01), ("ApplyFtrl", "SparseApplyFtrl")),
    (lambda: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1),
     ("ApplyFtrlV2", "SparseApplyFtrlV2")),
]


def _optimizer_case(make):
    def build():
        dense, sparse = _variable(), _variable()
        optimizer = make()
        rows = tf.IndexedSlices(tf.constant(_GRAD[:2]), tf.constant([2, 0]), tf.constant([3, 2]))
        step = optimizer.apply_gradients([(tf.constant(_GRAD), dense), (rows, sparse)])
        return [_read_after(step, dense), _read_after(step, sparse)]
    return build


CASES = [
    OpCase("state:assignments", _assignments, ops=("Assign", "AssignAdd", "AssignSub"),
           expected=lambda: [_GRAD, _START + _GRAD, _START - _GRAD]),
    OpCase("state:scatters", _scatters, ops=("ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterUpdate")),
    OpCase("state:count_up_to", _counters, ops=("CountUpTo", "IsVariableInitialized"),
           expected=lambda: [np.int32(3), True]),
] + [OpCase(f"training:{ops[0]}", _optimizer_case(make), ops=ops) for make, ops in _OPTIMIZERS]
