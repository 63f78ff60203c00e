"""Values live no longer than the step needs them: a finished loop frame holds nothing (loop
invariants, input slots, iteration templates), and neither the dataflow executor nor the
straight-line path (nor its hand-over to the executor) keeps a value once its last consumer has
taken it. (An optimizer's update later in the same step can then write the variable in place:
ops/training_ops.py updates in place only what nothing else references.)

Each test pauses a step at an asynchronous kernel that waits for the test (TestGate), after
everything else ready has run, and checks, through weak references to arrays made by TestTrack,
which values are still alive."""
import threading
import time
import weakref

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util


class Tracked(np.ndarray):
    """An array that can be weakly referenced."""


TRACKED: list = []  # weak references to every array TestTrack made
GATES: dict = {}  # gate node name -> the event it waits for

TestTrack = define_op("TestTrack", inputs=["x: float"], outputs=["y: float"], shape_fn=_util.unchanged)


@TestTrack.kernel()
def _track_kernel(ctx):
    def compute(x):
        y = np.array(x, np.float32).view(Tracked)
        TRACKED.append(weakref.ref(y))
        return y
    return compute


TestGate = define_op("TestGate", inputs=["x: float"], outputs=["y: float"], shape_fn=_util.unchanged,
                     is_async=True, is_stateful=True)


@TestGate.kernel()
def _gate_kernel(ctx):
    event = GATES.setdefault(ctx.op.name, threading.Event())

    def compute(step, done, x):
        def wait():
            event.wait(30)
            done(np.asarray(x, np.float32).copy())  # a plain copy: the tracked input stays ours
        threading.Thread(target=wait, daemon=True).start()
    return compute


TestHoldAt = define_op("TestHoldAt", inputs=["x: int32"], outputs=["y: int32"], attrs=["at: int"],
                       shape_fn=_util.unchanged, is_async=True, is_stateful=True)


@TestHoldAt.kernel()
def _hold_at_kernel(ctx):
    event, at = GATES.setdefault(ctx.op.name, threading.Event()), ctx.attr("at")

    def compute(step, done, x):
        if int(x) != at:
            done(x)
            return
        threading.Thread(target=lambda: (event.wait(30), done(x)), daemon=True).start()
    return compute


def track(x):
    return apply_op(TestTrack, x=x)


def gate(x, name="gate"):
    return apply_op(TestGate, x=x, name=name)


def open_gates():
    for event in GATES.values():
        event.set()


def live():
    return sum(ref() is not None for ref in TRACKED)


def eventually(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


@pytest.fixture(autouse=True)
def fresh():
    TRACKED.clear()
    GATES.clear()
    yield
    open_gates()


def run_paused(fetches, check, config=None):
    """Runs `fetches` in a thread; while it waits at its gate, `check()` must come true."""
    with tf.Session(config=config) as sess:
        result = {}
        thread = threading.Thread(target=lambda: result.setdefault("value", sess.run(fetches)))
        thread.start()
        try:
            assert eventually(lambda: TRACKED and check()), f"{live()} tracked arrays still alive"
            assert thread.is_alive(), "the step did not wait at its gate"
        finally:
            open_gates()
            thread.join(30)
        return result["value"]


def test_finished_loop_frame_holds_no_invariant_and_no_iteration_value():
    invariant = track(tf.constant([1.0, 2.0]))

    def body(i, acc):
        # `invariant` enters the frame as a loop invariant; each iteration makes a tracked value
        return i + 1, track(acc + invariant)

    out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), track(tf.constant([0.0, 0.0]))])
    after = gate(out[1])
    # only the loop's result is alive: the gate holds it
    value = run_paused(after, lambda: live() == 1)
    np.testing.assert_allclose(value, [4.0, 8.0])
    assert len(TRACKED) == 6


def test_loop_invariants_are_released_once_the_loop_exits_before_its_frame_is_done():
    """An iteration still running (held at i == 2) keeps the frame open after the loop's
    predicate turned false; nothing can start another iteration, so the invariant goes."""
    invariant = track(tf.constant([1.0, 2.0]))

    def body(i, acc, held):
        return i + 1, acc + invariant, apply_op(TestHoldAt, x=i, at=2, name="hold")

    out = tf.while_loop(lambda i, acc, held: i < 3, body, [tf.constant(0), tf.zeros([2]), tf.constant(0)],
                        parallel_iterations=4)
    value, held = run_paused([out[1], out[2]], lambda: live() == 0)
    np.testing.assert_allclose(value, [3.0, 6.0])
    assert held == 2


def test_nested_frames_and_parallel_iterations_are_released():
    invariant = track(tf.constant(1.0))

    def outer(i, acc):
        inner = tf.while_loop(lambda j, a: j < 3, lambda j, a: (j + 1, track(a + invariant)), [0, acc],
                              parallel_iterations=3)
        return i + 1, inner[1]

    out = tf.while_loop(lambda i, acc: i < 3, outer, [0, tf.constant(0.0)], parallel_iterations=2)
    value = run_paused(gate(out[1]), lambda: live() == 1)
    assert value == 9.0


def test_dataflow_executor_drops_values_once_consumed():
    """Threads in play (two expensive branches): values are dropped by whichever thread ran
    their last consumer."""
    x = track(tf.constant(np.ones((4, 4), np.float32)))
    a = tf.matmul(x, x)
    b = tf.matmul(x + 1.0, x)
    with tf.control_dependencies([a, b]):
        waited = gate(tf.constant(0.0))
    value = run_paused([waited, a + b], lambda: live() == 0, tf.ConfigProto(inter_op_parallelism_threads=2))
    np.testing.assert_allclose(value[1], np.full((4, 4), 12.0))


def test_straight_line_hand_over_keeps_only_what_later_nodes_need():
    """A value read before the first wait and after it lives until its last reader ran (and
    not until the step ends, although the straight-line path had delivered it to both)."""
    x = track(tf.constant([1.0, 2.0]))
    early = x * 2.0
    first = gate(early, "first")
    late = x + first  # needs x after the wait
    with tf.control_dependencies([late]):
        second = gate(tf.constant(0.0), "second")
    with tf.Session() as sess:
        result = {}
        thread = threading.Thread(target=lambda: result.setdefault("value", sess.run([late, second])))
        thread.start()
        try:
            assert eventually(lambda: live() == 1)  # at the first gate: `late` still needs x
            GATES["first"].set()
            assert eventually(lambda: live() == 0)  # `late` ran; the second gate waits
        finally:
            open_gates()
            thread.join(30)
    np.testing.assert_allclose(result["value"][0], [3.0, 6.0])
