"""Test-only ops shared by the executor tests: an expensive kernel that sleeps (as a BLAS call
does, releasing the GIL) and records when and on which thread it ran, and asynchronous kernels
that finish later or only when cancelled."""
import threading
import time

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.ops import _util

NAPS: list = []  # (start, end, thread id) of every TestNap run

TestNap = define_op("TestNap", inputs=["x: float"], outputs=["y: float"], attrs=["seconds: float"],
                    shape_fn=_util.unchanged, expensive=True)


@TestNap.kernel()
def _nap_kernel(ctx):
    seconds = ctx.attr("seconds")

    def compute(x):
        start = time.perf_counter()
        time.sleep(seconds)
        NAPS.append((start, time.perf_counter(), threading.get_ident()))
        return x
    return compute


TestAsyncDouble = define_op("TestAsyncDouble", inputs=["x: float"], outputs=["y: float"],
                            attrs=["seconds: float"], shape_fn=_util.unchanged, is_async=True)


@TestAsyncDouble.kernel()
def _async_double_kernel(ctx):
    seconds = ctx.attr("seconds")

    def compute(step, done, x):  # 2x, from a timer thread after `seconds`
        threading.Timer(seconds, lambda: done(x * 2)).start()
    return compute


TestAsyncNever = define_op("TestAsyncNever", inputs=["x: float"], outputs=["y: float"],
                           shape_fn=_util.unchanged, is_async=True)


@TestAsyncNever.kernel()
def _async_never_kernel(ctx):
    def compute(step, done, x):  # finishes only with the step's cancellation
        if step.cancellation.register(lambda err: done(err)) is None:
            done(tf.errors.CancelledError(None, None, "cancelled"))
    return compute


def assert_close_cancels(sess, fetch):
    """Runs `fetch` (a step that blocks) on a thread, closes `sess`, and checks that the step
    ended with CancelledError."""
    caught = []

    def run():
        try:
            sess.run(fetch)
        except tf.errors.CancelledError as err:
            caught.append(err)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.1)
    sess.close()
    t.join(5)
    assert not t.is_alive() and len(caught) == 1
