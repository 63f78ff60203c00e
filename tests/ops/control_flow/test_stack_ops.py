"""Stack ops (StackV2/StackPushV2/StackPopV2/StackCloseV2), which keep a loop's forward values for
its gradient, and ControlTrigger, which orders ops that may be dead."""
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.control_flow import primitives, stack_ops
from tensorweave.testing.op_test import check_op


def test_push_pop_lifo_and_static_shapes():
    h = stack_ops.stack(tf.float32)
    a = stack_ops.stack_push(h, tf.constant([1.0, 2.0]))
    with tf.control_dependencies([a]):
        b = stack_ops.stack_push(h, tf.constant([3.0, 4.0]))
    with tf.control_dependencies([b]):
        first = stack_ops.stack_pop(h, tf.float32, shape=[2])
    with tf.control_dependencies([first]):
        second = stack_ops.stack_pop(h, tf.float32, shape=[2])
    assert b.shape.as_list() == [2] and first.shape.as_list() == [2]
    check_op(b, [3.0, 4.0])
    with tf.Session() as sess:
        got = sess.run([first, second])
    np.testing.assert_array_equal(got[0], [3.0, 4.0])
    np.testing.assert_array_equal(got[1], [1.0, 2.0])
    assert stack_ops.stack_pop(h, tf.float32).shape.ndims is None


def test_pop_empty_overflow_and_closed_are_errors():
    h = stack_ops.stack(tf.int32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="stack is empty"):
            sess.run(stack_ops.stack_pop(h, tf.int32))
        small = stack_ops.stack(tf.int32, max_size=1)
        p1 = stack_ops.stack_push(small, 1)
        with tf.control_dependencies([p1]):
            p2 = stack_ops.stack_push(small, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="overflowed its max_size"):
            sess.run(p2)
        closed = stack_ops.stack(tf.int32)
        close = stack_ops.stack_close(closed)
        with tf.control_dependencies([close]):
            late = stack_ops.stack_push(closed, 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="closed"):
            sess.run(late)


def test_pushes_from_overlapping_iterations_pop_in_iteration_order():
    """Iteration 0 pushes last (it is slow); pops still return iterations 3, 2, 1, 0."""
    h = stack_ops.stack(tf.int32)

    def slow_first(i):
        if i == 0:
            time.sleep(0.05)
        return i

    def body(i):
        value = tf.py_func(slow_first, [i], tf.int32)
        push = stack_ops.stack_push(h, value)
        with tf.control_dependencies([push]):
            return i + 1
    done = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)], parallel_iterations=4)
    pops = []
    dep = [done]
    for _ in range(4):
        with tf.control_dependencies(dep):
            pops.append(stack_ops.stack_pop(h, tf.int32))
        dep = [pops[-1]]
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        assert sess.run(pops) == [3, 2, 1, 0]


def test_stack_per_step_is_fresh():
    h = stack_ops.stack(tf.float32)
    push = stack_ops.stack_push(h, tf.constant(5.0))
    with tf.control_dependencies([push]):
        pop = stack_ops.stack_pop(h, tf.float32)
    with tf.Session() as sess:
        assert [sess.run(pop) for _ in range(3)] == [5.0, 5.0, 5.0]


def test_control_trigger_fires_after_dead_inputs():
    p = tf.placeholder(tf.bool, [])
    _, taken = primitives.switch(tf.constant(1.0), p)
    dead_when_false = tf.identity(taken)
    trigger = primitives.control_trigger()
    trigger._add_control_input(dead_when_false.op)
    with tf.control_dependencies([trigger]):
        after_trigger = tf.constant(7)
    with tf.control_dependencies([dead_when_false]):
        after_dead = tf.identity(tf.constant(8))
    with tf.Session() as sess:
        assert sess.run(after_trigger, {p: False}) == 7
        assert sess.run(after_trigger, {p: True}) == 7
        with pytest.raises(tf.errors.InvalidArgumentError, match="dead"):
            sess.run(after_dead, {p: False})
