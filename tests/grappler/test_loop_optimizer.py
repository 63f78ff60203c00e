"""Loop optimisation: loop-invariant nodes leave their while frame (nested loops too), stack
pushes no gradient pops go, and what must stay in the loop stays; numbers equal with the pass on
and off, gradient loops included."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.grappler.settings import settings_for
from tensorweave.ops.control_flow import stack_ops
from tests.grappler.helpers import ONLY, by_name, off_config, on_config, optimize, types

LOOP = ONLY["loop_optimization"]


def _same_numbers(fetches, feed_dict=None, init=None):
    with tf.Session(config=off_config()) as sess:
        if init is not None:
            sess.run(init)
        expected = sess.run(fetches, feed_dict)
    with tf.Session(config=on_config()) as sess:
        if init is not None:
            sess.run(init)
        got = sess.run(fetches, feed_dict)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-6)
    return got


def _reads_enter(op):
    return any(t.op.type == "Enter" for t in op.inputs)


def _loop(a, w):
    def body(i, acc):
        inv = tf.exp(w) * a                      # the same in every iteration
        return i + 1, acc + inv * tf.cast(i, tf.float32)
    return tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.zeros([3])])[1]


def test_invariant_nodes_leave_the_frame():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        w = tf.constant([1.0, 2.0, 3.0])
        out = _loop(a, w)
        ops, _ = optimize([out], [a], settings=LOOP)
        names = by_name(ops)
        exp, mul = names["while/Exp"], names["while/mul"]
        assert not _reads_enter(exp) and exp.inputs[0].op.type == "Const" and not exp.control_inputs
        assert mul.inputs[0].op is exp and mul.inputs[1] is a  # the placeholder itself, not its Enter
        enters = [op for op in ops if op.name.startswith("LoopOptimizer/")]
        assert len(enters) == 1 and enters[0].type == "Enter" and enters[0].get_attr("is_constant")
        assert enters[0].inputs[0].op is mul
        assert names["while/mul_1"].inputs[0].op is enters[0]  # the variant product stays in the loop
        got = _same_numbers([out], {a: [1.0, -2.0, 0.5]})[0]
        np.testing.assert_allclose(got, np.exp([1.0, 2.0, 3.0]) * [1.0, -2.0, 0.5] * 10, rtol=1e-6)


def test_nested_loops_invariant_leaves_both_frames():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2])

        def outer(j, total):
            def inner(i, acc):
                return i + 1, acc + tf.sin(a) * 2.0 + tf.cast(i + j, tf.float32)
            acc = tf.while_loop(lambda i, acc: i < 3, inner, [tf.constant(0), tf.zeros([2])])[1]
            return j + 1, total + acc
        out = tf.while_loop(lambda j, t: j < 4, outer, [tf.constant(0), tf.zeros([2])])[1]
        ops, _ = optimize([out], [a], settings=LOOP)
        sin = next(op for op in ops if op.type == "Sin")
        assert sin.inputs[0] is a                       # out of both loops
        double = next(op for op in ops if op.type == "Mul" and op.inputs[0].op is sin)
        assert not _reads_enter(double)
        assert len([op for op in ops if op.name.startswith("LoopOptimizer/")]) >= 2
        _same_numbers([out], {a: [0.3, -1.2]})


def test_gradient_loop_numbers_unchanged():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        w = tf.Variable([0.5, -1.0, 2.0])

        def body(i, acc):
            scale = tf.tanh(w.read_value() * 0.5 + 1.0)  # not moved: reads a variable
            inv = tf.sin(x) + tf.cos(x)                   # moved: its gradient reads x, no history
            kept = tf.exp(x)                              # stays: a push of its value reads it
            acc = acc + kept * 0.01
            return i + 1, acc * scale + inv
        out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.ones([3])])[1]
        loss = tf.reduce_sum(out * out)
        grads = tf.gradients(loss, [x, w])
        ops, _ = optimize(grads + [loss], [x], settings=LOOP)
        sin = next(op for op in ops if op.type == "Sin" and op.name.startswith("while/"))
        assert sin.inputs[0] is x
        assert _reads_enter(next(op for op in ops if op.type == "Exp" and op.name.startswith("while/")))
        assert "StackPushV2" in types(ops) and "StackPopV2" in types(ops)  # the gradient pops them
        _same_numbers(grads + [loss], {x: [0.1, 0.2, -0.3]}, init=w.initializer)


def _pushing_loop(x, pop_after):
    """A loop pushing each iteration's value on a stack made outside it (as a gradient's
    history is), the pushed value used by the body; with `pop_after` the last value is popped
    after the loop."""
    handle = stack_ops.stack(tf.float32, name="history")

    def body(i, acc):
        pushed = stack_ops.stack_push(handle, tf.sin(acc) * x)
        return i + 1, pushed + 1.0
    out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.ones([3])])[1]
    if pop_after:
        with tf.control_dependencies([out]):
            out = out + stack_ops.stack_pop(handle, tf.float32, shape=[3])
    return out


def test_stack_pushes_without_pops_removed():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        out = _pushing_loop(x, pop_after=False)
        ops, _ = optimize([out], [x], settings=LOOP)
        assert "StackPushV2" not in types(ops) and "StackV2" not in types(ops)
        push = by_name(ops)["while/StackPushV2"]
        assert push.type == "Identity" and push.inputs[0].op.type == "Mul"
        _same_numbers([out], {x: [0.5, 1.0, -1.5]})


def test_stack_pushes_with_a_pop_stay():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        out = _pushing_loop(x, pop_after=True)
        ops, _ = optimize([out], [x], settings=LOOP)
        assert "StackPushV2" in types(ops) and "StackPopV2" in types(ops)
        _same_numbers([out], {x: [0.5, 1.0, -1.5]})


def test_stateful_and_ordered_nodes_stay():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        v = tf.Variable(tf.zeros([3]))

        def body(i, acc):
            noise = tf.random_uniform([3], seed=1)        # stateful: stays
            with tf.control_dependencies([tf.assign_add(v, a)]):
                after = tf.exp(a)                         # waits on an update: stays
            return i + 1, acc + noise * 0.0 + after
        out = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.zeros([3])])[1]
        ops, _ = optimize([out], [a], settings=LOOP)
        assert _reads_enter(next(op for op in ops if op.type == "Exp"))
        assert not any(op.name.startswith("LoopOptimizer/") for op in ops)


def test_invariant_read_only_by_a_stateful_consumer_stays():
    """Moving `inv` out would make the assign run in the last, untaken iteration too."""
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        v = tf.Variable(tf.zeros([3]))

        def body(i, acc):
            inv = tf.exp(a)
            with tf.control_dependencies([tf.assign_add(v, inv)]):
                return i + 1, tf.identity(acc)
        out = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), tf.zeros([3])])[1]
        ops, _ = optimize([out], [a], settings=LOOP)
        assert _reads_enter(next(op for op in ops if op.type == "Exp"))
        with tf.Session(config=on_config()) as sess:
            sess.run(v.initializer)
            sess.run(out, {a: [0.0, 1.0, 2.0]})
            np.testing.assert_allclose(sess.run(v), 3 * np.exp([0.0, 1.0, 2.0]), rtol=1e-6)


def test_off_switch_and_graphs_without_loops():
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.loop_optimization = config.graph_options.rewrite_options.OFF
    assert not settings_for(config).loop_optimization and settings_for(tf.ConfigProto()).loop_optimization
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        out = tf.exp(a) * 2.0
        ops, fetches = optimize([out], [a], settings=LOOP)
        assert fetches[0] is out  # nothing to do without a loop


@pytest.mark.parametrize("parallel", [1, 10])
def test_moved_enter_keeps_the_loops_parallel_iterations(parallel):
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        out = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + tf.exp(a) * tf.cast(i, tf.float32)),
                            [tf.constant(0), tf.zeros([3])], parallel_iterations=parallel)[1]
        ops, _ = optimize([out], [a], settings=LOOP)
        (enter,) = [op for op in ops if op.name.startswith("LoopOptimizer/")]
        assert enter.get_attr("parallel_iterations") == parallel
        _same_numbers([out], {a: [1.0, 2.0, 3.0]})


@pytest.mark.parametrize("taken", [True, False])
def test_branch_a_constant_predicate_never_takes_is_removed(taken):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        flag = tf.constant(taken)
        out = tf.cond(flag, lambda: tf.exp(x) * 2.0, lambda: tf.sin(x) - 1.0)
        ops, _ = optimize([out], [x], settings=LOOP)
        kinds = types(ops)
        assert "Switch" not in kinds and "Merge" not in kinds
        assert ("Exp" in kinds) == taken and ("Sin" in kinds) == (not taken)
        assert by_name(ops)[out.op.name].type == "Identity"  # the Merge, keeping its name
        got = _same_numbers([out], {x: [0.5, -1.0, 2.0]})[0]
        want = np.exp([0.5, -1.0, 2.0]) * 2.0 if taken else np.sin([0.5, -1.0, 2.0]) - 1.0
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_branches_of_unknown_or_fetched_predicates_stay():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        p = tf.placeholder(tf.bool, [])
        out = tf.cond(p, lambda: tf.exp(x), lambda: tf.sin(x))
        ops, _ = optimize([out], [x, p], settings=LOOP)
        assert "Switch" in types(ops) and "Merge" in types(ops)
        flag = tf.constant(True)
        dead = []

        def untaken():
            dead.append(tf.sin(x, name="untaken"))
            return dead[0]
        out = tf.cond(flag, lambda: tf.exp(x), untaken)
        with tf.control_dependencies([out]):
            target = tf.no_op()
        ops, _ = optimize([out], [x], targets=[dead[0].op], settings=LOOP)  # the dead branch is a target
        assert "Switch" in types(ops) and "Merge" in types(ops)
        del target
