"""tf.train.Supervisor against TensorFlow 2.21 (tests/data/tf_supervisor_expected.json, written by
make_tf_supervisor_fixtures.py running the same programs of tests/data/supervisor_cases.py)."""
import json
import os
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.data import supervisor_cases

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "tf_supervisor_expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.mark.parametrize("case", [c.__name__ for c in supervisor_cases.CASES])
def test_supervisor_programs_behave_as_tensorflows(tmp_path, case):
    got = getattr(supervisor_cases, case)(tf, str(tmp_path))
    want = EXPECTED[case]
    assert got.keys() == want.keys()
    for key in want:
        if key.endswith("_w"):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
        else:
            assert got[key] == want[key], key


def _events(logdir):
    out = []
    for path in sorted(tf.gfile.Glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for e in tf.train.summary_iterator(path):
            out.append(e)
    return out


def test_standard_services_are_tfs_three_threads_and_write_on_their_timers(tmp_path):
    gs = tf.train.get_or_create_global_step()
    tf.summary.scalar("g", tf.cast(gs, tf.float32))
    inc = tf.assign_add(gs, 1)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.05, save_summaries_secs=0.05)
    sess = sv.prepare_or_wait_for_session(start_standard_services=False)
    threads = sv.start_standard_services(sess)
    assert [type(t).__name__ for t in threads] == ["SVSummaryThread", "SVStepCounterThread",
                                                   "SVTimerCheckpointThread"]
    assert all(t.daemon and t.is_alive() for t in threads)
    for _ in range(5):
        sess.run(inc)
    end = time.time() + 10
    while not (tf.train.latest_checkpoint(str(tmp_path)) or "").endswith("-5") and time.time() < end:
        time.sleep(0.02)
    sv.stop()
    assert not any(t.is_alive() for t in threads)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")
    tags = {v.tag for e in _events(str(tmp_path)) if e.HasField("summary") for v in e.summary.value}
    assert tags == {"g", "global_step/sec"}
    sess.close()


def test_an_error_in_a_service_thread_is_raised_again_when_managed_session_ends():
    tf.Variable(1.0)
    sv = tf.train.Supervisor()

    def fail():
        raise tf.errors.InvalidArgumentError(None, None, "thread failed")

    with pytest.raises(tf.errors.InvalidArgumentError, match="thread failed"):
        with sv.managed_session() as sess:
            sv.loop(None, fail)
            sv.wait_for_stop()
            assert sess.run("Variable:0") == 1.0
    assert sv.should_stop()


def test_stop_on_exception_and_live_threads_past_the_grace_period():
    tf.Variable(1.0)
    sv = tf.train.Supervisor(stop_grace_secs=0.1)
    with sv.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "done")  # a clean stop: not re-raised
    assert sv.should_stop()
    sess = sv.prepare_or_wait_for_session()
    assert not sv.should_stop()
    release = threading.Event()
    stuck = threading.Thread(target=release.wait, daemon=True)
    stuck.start()
    with pytest.raises(RuntimeError, match="Coordinator stopped with threads still running"):
        sv.stop(threads=[stuck])
    sv.stop(threads=[stuck], ignore_live_threads=True)
    release.set()
    sess.close()


def test_given_summary_writer_session_manager_and_camel_case_names(tmp_path):
    gs = tf.train.get_or_create_global_step()
    writer = tf.summary.FileWriter(str(tmp_path / "mine"))
    sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    sv = tf.train.Supervisor(logdir=str(tmp_path / "log"), summary_writer=writer, session_manager=sm,
                             save_model_secs=0, checkpoint_basename="my.ckpt")
    assert sv.summary_writer is writer and sv.session_manager is sm
    assert sv.save_path == str(tmp_path / "log" / "my.ckpt")
    assert sv.PrepareSession == sv.prepare_or_wait_for_session and sv.Stop == sv.stop
    sess = sv.PrepareSession()
    sv.SummaryComputed(sess, tf.Summary(value=[tf.Summary.Value(tag="t", simple_value=2.0)]))
    sv.Stop()
    events = _events(str(tmp_path / "mine"))
    summaries = [(e.step, v.tag) for e in events if e.HasField("summary") for v in e.summary.value]
    assert [s for s in summaries if s[1] != "global_step/sec"] == [(0, "t")]  # the step counter's is timing
    assert sum(e.HasField("graph_def") for e in events) == 1
    assert sum(e.HasField("meta_graph_def") for e in events) == 1
    assert events[-1].session_log.status == tf.SessionLog.STOP
    assert int(sess.run(gs)) == 0
    sess.close()
