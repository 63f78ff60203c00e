"""Monitored training against TensorFlow 2.21 (tests/data/tf_monitored_expected.json, written by
make_tf_monitored_fixtures.py running the same programs of tests/data/monitored_cases.py)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.data import monitored_cases

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "tf_monitored_expected.json")) as _f:
    EXPECTED = json.load(_f)


def test_training_with_checkpoint_and_summary_hooks_then_resuming(tmp_path):
    got = monitored_cases.training_with_checkpoints(tf, str(tmp_path))
    want = EXPECTED["training_with_checkpoints"]
    assert got["first"] == want["first"]
    assert got["second"] == want["second"]
    kinds = lambda s: [e for e in s if not e[1].startswith("session_log")]  # noqa: E731
    assert kinds(got["summaries"]) == kinds(want["summaries"])
    checkpoints = lambda s: sorted({e[0] for e in s if e[1] == "session_log:3"})  # noqa: E731
    assert checkpoints(got["summaries"]) == checkpoints(want["summaries"])
    tf.summary.FileWriterCache.clear()


@pytest.mark.parametrize("case", ["out_of_range_ends_quietly", "hooks_behaviour", "chief_and_worker_session_creators"])
def test_monitored_session_behaviour_is_tensorflows(tmp_path, case):
    got = getattr(monitored_cases, case)(tf, str(tmp_path))
    want = EXPECTED[case]
    assert got.keys() == want.keys()
    for key in want:
        if isinstance(want[key], list) and want[key] and isinstance(want[key][0], float):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
        else:
            assert got[key] == want[key], key


def test_worker_waits_for_the_chief_and_gives_up_with_deadline_exceeded():
    tf.train.get_or_create_global_step()
    tf.Variable(1.0)
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.1)
    with pytest.raises(tf.errors.DeadlineExceededError, match="not ready after waiting"):
        sm.wait_for_session("", max_wait_secs=0.3)


def test_recoverable_session_recreates_the_session_after_aborted():
    """AbortedError/UnavailableError during a run: MonitoredSession creates the session again
    (restoring from the latest checkpoint) and repeats the call."""
    gs = tf.train.get_or_create_global_step()
    calls = []

    def flaky(x):
        calls.append(x)
        if len(calls) == 2:
            raise tf.errors.AbortedError(None, None, "worker restarted")
        return x

    out = tf.py_func(flaky, [tf.constant(3)], tf.int32)
    inc = tf.assign_add(gs, 1)
    created = []

    class Counting(tf.train.ChiefSessionCreator):
        def create_session(self):
            created.append(1)
            return super().create_session()

    with tf.train.MonitoredSession(session_creator=Counting()) as sess:
        assert sess.run([out, inc])[0] == 3
        assert sess.run(out) == 3  # aborted once, then recovered
    assert len(created) == 2 and len(calls) == 3


def test_run_step_fn_and_logging_hook(caplog):
    gs = tf.train.get_or_create_global_step()
    inc = tf.assign_add(gs, 1)
    hook = tf.train.LoggingTensorHook({"step": gs}, every_n_iter=2)
    seen = []
    with caplog.at_level("INFO", logger="tensorflow"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            def step_fn(step_context):
                value = step_context.run_with_hooks(inc)
                seen.append(int(value))
                if value >= 3:
                    step_context.request_stop()
            while not sess.should_stop():
                sess.run_step_fn(step_fn)
    assert seen == [1, 2, 3]
    assert any("step = " in r.getMessage() for r in caplog.records)
