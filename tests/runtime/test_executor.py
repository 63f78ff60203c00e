"""The dataflow executor: dead values, frames and iterations (built here from the raw
primitives), expensive kernels in parallel, asynchronous kernels, cancellation."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.control_flow import primitives as cf
from tensorweave.testing.op_test import assert_run_error

from tests.runtime.kernels_for_tests import NAPS, TestAsyncDouble, TestAsyncNever, TestNap, assert_close_cancels


# -- dead values -----------------------------------------------------------------------------------
def test_switch_merge_dead_propagation():
    x = tf.constant(3.0)
    pred = tf.placeholder(tf.bool, [])
    f, t = cf.switch(x, pred)
    f2 = tf.identity(tf.identity(f) * 10.0)   # a chain of ops on the false side
    t2 = tf.identity(t) + 1.0
    out, index = cf.merge([f2, t2])
    with tf.Session() as sess:
        assert sess.run([out, index], {pred: True}) == [4.0, 1]
        assert sess.run([out, index], {pred: False}) == [30.0, 0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="dead"):
            sess.run(f2, {pred: True})


def test_merge_of_two_dead_inputs_is_dead():
    x = tf.constant(1.0)
    pred = tf.constant(True)
    f1, _ = cf.switch(x, pred)
    f2, _ = cf.switch(x, pred)
    out, _ = cf.merge([f1, f2])
    after = tf.identity(out)
    live = tf.identity(x)
    with tf.Session() as sess:
        assert sess.run(live) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="dead"):
            sess.run(after)


def test_side_effect_only_in_taken_branch():
    v = tf.Variable(0.0)
    pred = tf.placeholder(tf.bool, [])
    f, t = cf.switch(tf.constant(1.0), pred)
    with tf.control_dependencies([tf.identity(t)]):
        bump = tf.assign_add(v, 5.0)   # dead when the true side is not taken
    out, _ = cf.merge([f, tf.identity(bump)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(out, {pred: False})
        assert sess.run(v) == 0.0
        sess.run(out, {pred: True})
        assert sess.run(v) == 5.0


# -- frames and iterations --------------------------------------------------------------------------
def build_counting_loop(limit, counter=None, parallel_iterations=10):
    """while i < limit: i += 1 (and counter += 1), from the raw primitives."""
    i0 = tf.constant(0)
    entered = cf.enter(i0, "loop", parallel_iterations=parallel_iterations)
    merged, _ = cf.merge([entered, entered])
    limit_in = cf.enter(limit, "loop", is_constant=True, parallel_iterations=parallel_iterations)
    pred = cf.loop_cond(tf.less(merged, limit_in))
    exit_false, body_in = cf.switch(merged, pred)
    result = cf.exit(exit_false)
    one = cf.enter(tf.constant(1), "loop", is_constant=True, parallel_iterations=parallel_iterations)
    body = tf.identity(body_in) + one
    if counter is not None:
        ref = apply_op(cf.RefEnter, data=counter._ref(), frame_name="loop", is_constant=True,
                          parallel_iterations=parallel_iterations)
        with tf.control_dependencies([body]):
            bump = tf.assign_add(ref, 1.0)
        body = tf.tuple([body], control_inputs=[bump])[0]
    merged.op._update_input(1, cf.next_iteration(body))
    return result


def test_loop_with_data_dependent_iterations():
    limit = tf.placeholder(tf.int32, [])
    result = build_counting_loop(limit)
    with tf.Session() as sess:
        assert sess.run(result, {limit: 7}) == 7
        assert sess.run(result, {limit: 0}) == 0
        assert sess.run(result, {limit: 100}) == 100


def test_stateful_op_in_loop_body_runs_once_per_iteration():
    counter = tf.Variable(0.0)
    result = build_counting_loop(tf.constant(5), counter)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(result) == 5
        assert sess.run(counter) == 5.0


def test_loop_with_parallel_iterations_one():
    result = build_counting_loop(tf.constant(12), parallel_iterations=1)
    with tf.Session() as sess:
        assert sess.run(result) == 12


# -- parallelism and asynchronous kernels -------------------------------------------------------------
def test_independent_expensive_kernels_run_concurrently():
    NAPS.clear()
    x = tf.placeholder(tf.float32)  # unknown size: the cost model must assume expensive
    a = apply_op(TestNap, x=x, seconds=0.25)
    b = apply_op(TestNap, x=x, seconds=0.25)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        sess.run([a, b], {x: [1.0]})
    (s1, e1, t1), (s2, e2, t2) = NAPS
    assert s1 < e2 and s2 < e1, "the two kernels did not overlap"
    assert t1 != t2


def test_two_independent_large_matmuls_run_at_the_same_time(monkeypatch):
    """The MatMul kernels of two independent products are dispatched to the device's thread
    pool together, so their BLAS calls (which release the GIL) overlap on two cores."""
    calls = []
    real_dot = np.dot

    def recording_dot(a, b, *args):
        start = time.perf_counter()
        result = real_dot(a, b, *args)
        if a.shape[0] >= 512:
            calls.append((start, time.perf_counter(), threading.get_ident()))
        return result

    monkeypatch.setattr(np, "dot", recording_dot)  # kernels look xp.dot up when built
    rng = np.random.RandomState(0)
    a_val, b_val = rng.standard_normal((2, 1024, 1024)).astype(np.float32)
    a, b = tf.constant(a_val), tf.constant(b_val)
    p, q = tf.matmul(a, b), tf.matmul(b, a)
    # One thread per kernel: each product stays one np.dot call (no intra-op splitting).
    config = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        for _ in range(3):
            calls.clear()
            got_p, got_q = sess.run([p, q])
            (s1, e1, t1), (s2, e2, t2) = calls
            if s1 < e2 and s2 < e1:
                break
    assert t1 != t2 and s1 < e2 and s2 < e1, "the two matmuls did not overlap"
    np.testing.assert_allclose(got_p, real_dot(a_val, b_val), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got_q, real_dot(b_val, a_val), rtol=1e-4, atol=1e-3)


def test_async_kernel_completes_from_another_thread():
    y = apply_op(TestAsyncDouble, seconds=0.05, x=tf.constant(21.0))
    z = y + 0.0
    with tf.Session() as sess:
        assert sess.run(z) == 42.0


def test_timeout_cancels_blocked_step():
    y = apply_op(TestAsyncNever, x=tf.constant(1.0))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y, options=tf.RunOptions(timeout_in_ms=100))


def test_close_cancels_blocked_step():
    y = apply_op(TestAsyncNever, x=tf.constant(1.0))
    sess = tf.Session()
    assert_close_cancels(sess, y)


def test_kernel_error_in_dataflow_path_is_raised():
    x = tf.placeholder(tf.float32, [None])
    y = apply_op(TestAsyncDouble, seconds=0.05, x=x)
    z = tf.reshape(y, [3])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(z, {x: [1, 2, 3]}), [2, 4, 6])
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(z, {x: [1, 2]})


def test_exit_or_next_iteration_outside_every_loop_is_invalid_argument():
    """A damaged GraphDef (issue 10 fuzz case): an Exit or a NextIteration whose input is in no
    while-loop frame. TensorFlow refuses the graph; it must not crash the executor."""
    for make in (cf.exit, cf.next_iteration):
        with tf.Graph().as_default() as g:
            out = make(tf.constant(1.0) * 2.0, name="stray")
            assert_run_error(out, error=tf.errors.InvalidArgumentError, match="corresponding Enter", graph=g)
