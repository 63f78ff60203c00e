"""Gradient-check cases for control flow (OSDI 4.1): tf.cond (Switch/Merge), tf.while_loop (Enter,
Exit, NextIteration, and the loop's own Switch/Merge), nested loops and conds inside loops, the
functional ops built on while_loop, TensorArrays, and tf.Print.

Loop cases run several iterations with loop invariants captured from outside, so the backward
loop's saved history (stacks) and the invariants' gradient accumulators are both exercised."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase


def _cond_case(x):
    """Both branches read x; the predicate is fixed by the inputs drawn (sum > 0 for 'true')."""
    return tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * x + tf.sin(x), lambda: tf.exp(x) * 3.0)


def _cond_outside_value(x, y):
    """A branch returning an outside tensor as is, and one using only y."""
    return tf.cond(tf.reduce_sum(x) > 0.0, lambda: x, lambda: y * 2.0) * y


def _while_case(x, w):
    """Two loop variables (one feeding the other) and a captured invariant w."""
    def body(i, a, b):
        return i + 1, a * tf.tanh(b) + w, b + tf.sin(a) * w
    _, a, b = tf.while_loop(lambda i, a, b: i < 4, body, [tf.constant(0), x, x * 0.5])
    return a + 2.0 * b


def _while_unused_variable(x):
    """Only `a` leaves the loop toward y, but `b` flows into `a`: b's Exit gets a zero gradient."""
    _, a, _ = tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * b, b + x),
                            [tf.constant(0), x, x])
    return a


def _nested_while(x, w):
    """An inner loop whose trip count depends on the outer iteration, and a cond in the body."""
    def outer(i, a):
        _, inner = tf.while_loop(lambda j, b: j <= i, lambda j, b: (j + 1, tf.sin(b) * w + b), [0, a])
        inner = tf.cond(tf.equal(i % 2, 0), lambda: inner * w, lambda: inner + 1.0)
        return i + 1, inner
    return tf.while_loop(lambda i, a: i < 3, outer, [0, x])[1]


def _data_dependent_trips(x):
    """The trip count depends on x's values (stays constant under the checker's small steps)."""
    def body(a, n):
        return a * 1.5 + tf.sin(a), n + 1.0
    a, _ = tf.while_loop(lambda a, n: tf.reduce_max(a) < 4.0, body, [x, tf.constant(0.0, tf.float64)])
    return a


def _growing_loop_variable(x):
    """A loop variable whose shape grows (shape_invariants) and a shape unknown statically."""
    out = tf.while_loop(lambda a: tf.size(a) < 8, lambda a: tf.concat([a, tf.sin(a) * a], 0), [x],
                        shape_invariants=[tf.TensorShape([None])])
    return out * 1.5


def _functional(x, w):
    scanned = tf.scan(lambda acc, v: acc * w + tf.sin(v), x)
    mapped = tf.map_fn(lambda v: v * v * w, x)
    folded = tf.foldl(lambda acc, v: acc * 0.5 + v * w, x)
    return scanned + mapped + folded


def _tensor_array_read_write(x):
    """Unstack (scatter), read twice per element (the gradient array sums both), write, stack
    (gather), gather."""
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False).unstack(x)
    out = tf.TensorArray(tf.float64, size=3)
    for i in range(3):
        out = out.write(i, ta.read(i) * ta.read((i + 1) % 3))
    return out.stack() + ta.gather([2, 0, 1])


def _tensor_array_split_concat(x):
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False).split(x, [1, 3, 2])
    return ta.concat() * tf.tile(ta.read(2), [3])


def _tensor_array_in_loop(x):
    """A loop writing a TensorArray from another read in the same iteration (dynamic_rnn's shape)."""
    steps = tf.shape(x)[0]
    inputs = tf.TensorArray(tf.float64, size=steps).unstack(x)
    outputs = tf.TensorArray(tf.float64, size=steps)

    def body(t, h, acc):
        h = tf.tanh(inputs.read(t) + h * 0.8)
        return t + 1, h, acc.write(t, h * h)
    _, h, acc = tf.while_loop(lambda t, h, acc: t < steps, body,
                              [tf.constant(0), tf.zeros_like(x[0]), outputs])
    return acc.stack() + h


@tf.RegisterGradient("TestAssignedValue")
def _assigned_value_grad(op, grad):
    """Assign has no gradient; its output holds exactly the value it assigned, so for this
    case the gradient passes to that value."""
    return [None, grad]


def _ref_enter(x):
    """A reference (Assign's output) read inside the loop enters it through RefEnter; the
    invariant's gradient is summed over the iterations."""
    v = tf.Variable(tf.zeros([2, 3], tf.float64), name="ref_enter_var")
    with tf.get_default_graph().gradient_override_map({"Assign": "TestAssignedValue"}):
        ref = tf.assign(v, x)
    _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * ref + 1.0),
                           [tf.constant(0), tf.ones([2, 3], tf.float64)])
    return acc


def _ref_switch(x):
    """A reference read inside a cond branch is routed by a RefSwitch (both branches here)."""
    v = tf.Variable(tf.zeros([2, 3], tf.float64), name="ref_switch_var")
    with tf.get_default_graph().gradient_override_map({"Assign": "TestAssignedValue"}):
        ref = tf.assign(v, x)
    take_true = tf.reduce_sum(x) > 0.0
    return tf.cond(take_true, lambda: ref * ref, lambda: ref * 3.0)


def _ref_merge(x):
    """Both branches return a reference (an assign's output): the cond ends in a RefMerge."""
    v = tf.Variable(tf.zeros([2, 3], tf.float64), name="ref_merge_var")
    with tf.get_default_graph().gradient_override_map({"Assign": "TestAssignedValue"}):
        merged = tf.cond(tf.reduce_sum(x) > 0.0, lambda: tf.assign(v, x * x), lambda: tf.assign(v, x * 3.0))
    assert merged.op.type == "RefMerge"
    return merged * 2.0


S = (2, 3)
CASES = [
    GradCase("cond_true_branch", ("Switch", "Merge"), _cond_case, [S], low=0.1, high=1.0),
    GradCase("cond_false_branch", ("Switch", "Merge"), _cond_case, [S], low=-1.0, high=-0.1),
    GradCase("cond_outside_value", ("Switch", "Merge"), _cond_outside_value, [S, S], low=0.1, high=1.0),
    GradCase("while_loop", ("Enter", "Exit", "NextIteration", "Switch", "Merge"), _while_case, [S, S],
             low=-0.8, high=0.8),
    GradCase("while_unused_variable", ("Enter", "Exit", "NextIteration"), _while_unused_variable, [S],
             low=0.5, high=1.2),
    GradCase("while_nested_with_cond", ("Enter", "Exit", "NextIteration", "Switch", "Merge"),
             _nested_while, [(3,), (3,)], low=-0.8, high=0.8),
    GradCase("while_data_dependent_trips", ("Enter", "Exit", "NextIteration"), _data_dependent_trips, [(3,)],
             init=lambda rng: [np.array([0.3, 0.9, 0.5])]),
    GradCase("while_growing_shape", ("Enter", "Exit", "NextIteration"), _growing_loop_variable, [(2,)]),
    GradCase("scan_map_fold", ("Enter", "Exit", "NextIteration", "TensorArrayReadV3", "TensorArrayWriteV3"),
             _functional, [(4, 2), (2,)], low=-0.9, high=0.9),
    GradCase("ref_enter", ("RefEnter",), _ref_enter, [S], low=0.2, high=0.9),
    GradCase("ref_switch_true", ("RefSwitch",), _ref_switch, [S], low=0.2, high=0.9),
    GradCase("ref_switch_false", ("RefSwitch",), _ref_switch, [S], low=-0.9, high=-0.2),
    GradCase("ref_merge_true", ("RefMerge",), _ref_merge, [S], low=0.2, high=0.9),
    GradCase("ref_merge_false", ("RefMerge",), _ref_merge, [S], low=-0.9, high=-0.2),
    GradCase("tensor_array_read_write", ("TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayScatterV3",
                                         "TensorArrayGatherV3"), _tensor_array_read_write, [(3, 2)]),
    GradCase("tensor_array_split_concat", ("TensorArraySplitV3", "TensorArrayConcatV3", "TensorArrayReadV3"),
             _tensor_array_split_concat, [(6,)]),
    GradCase("tensor_array_in_loop", ("TensorArrayReadV3", "TensorArrayWriteV3", "Enter", "Exit"),
             _tensor_array_in_loop, [(4, 3)]),
    GradCase("print", ("Print",), lambda x: tf.Print(x, [x], "print case: ", first_n=1) * 2.0, [S]),
]
