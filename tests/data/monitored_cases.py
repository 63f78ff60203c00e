"""Monitored-training programs run under either library (`tf` is passed in):
make_tf_monitored_fixtures.py records what TensorFlow does, tests/training/test_monitored_session.py
checks tensorweave against it. Each case returns JSON-able facts: steps run, global steps,
checkpoints written, summary steps and tags, hook calls, errors."""
import glob
import os

import numpy as np


def _model(tf):
    gs = tf.train.get_or_create_global_step()
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.3], [0.2]]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, w, loss, train


def _checkpoints(tf, d):
    state = tf.train.get_checkpoint_state(d)
    if state is None:
        return None
    return {"latest": os.path.basename(state.model_checkpoint_path),
            "all": [os.path.basename(p) for p in state.all_model_checkpoint_paths]}


def _summary_steps(tf, d):
    out = []
    for path in sorted(glob.glob(os.path.join(d, "events.out.tfevents.*"))):
        for e in tf.train.summary_iterator(path):
            if e.HasField("summary"):
                out += [[e.step, v.tag] for v in e.summary.value]
            elif e.HasField("session_log"):
                out.append([e.step, "session_log:%d" % e.session_log.status])
    return sorted(out)


def recorder(tf, fetch):
    """A hook recording its calls as the session makes them."""

    class Recorder(tf.train.SessionRunHook):
        def __init__(self):
            self.calls = []

        def begin(self):
            self.calls.append("begin")

        def after_create_session(self, session, coord):
            self.calls.append("after_create_session")

        def before_run(self, run_context):
            self.calls.append("before_run")
            return tf.train.SessionRunArgs(fetch)

        def after_run(self, run_context, run_values):
            self.calls.append("after_run" if run_values.results is not None else "after_run:None")

        def end(self, session):
            self.calls.append("end")

    return Recorder()


def training_with_checkpoints(tf, workdir):
    d = os.path.join(workdir, "train")
    out = {}
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        hook = recorder(tf, gs)
        runs = 0
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3, save_summaries_steps=2,
                                               log_step_count_steps=5,
                                               hooks=[tf.train.StopAtStepHook(last_step=10), hook]) as sess:
            while not sess.should_stop():
                sess.run(train)
                runs += 1
        out["first"] = {"runs": runs, "calls": hook.calls[:4] + hook.calls[-3:], "n_calls": len(hook.calls),
                        "checkpoints": _checkpoints(tf, d),
                        "graph_pbtxt": os.path.exists(os.path.join(d, "graph.pbtxt"))}
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        steps = []
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=3,
                                               hooks=[tf.train.StopAtStepHook(num_steps=4)]) as sess:
            steps.append(int(sess.run(gs)))
            while not sess.should_stop():
                steps.append(int(sess.run([train, gs])[1]))
            out["second"] = {"steps": steps}
        out["second"]["checkpoints"] = _checkpoints(tf, d)
    out["summaries"] = _summary_steps(tf, d)
    return out


def out_of_range_ends_quietly(tf, workdir):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, tf.float32)
        enq = q.enqueue_many([[1.0, 2.0, 3.0]])
        close = q.close()
        deq = q.dequeue()
        got = []
        with tf.train.MonitoredSession() as sess:
            sess.run(enq)
            sess.run(close)
            while not sess.should_stop():
                got.append(float(sess.run(deq)))
        return {"got": got, "should_stop": bool(sess.should_stop())}


def hooks_behaviour(tf, workdir):
    out = {}
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        final = tf.train.FinalOpsHook([w * 2.0])
        with tf.train.SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=3), final]) as sess:
            while not sess.should_stop():
                sess.run(train)
            out["raw_gs"] = int(sess.raw_session().run(gs))
        out["final"] = np.asarray(final.final_ops_values[0]).ravel().tolist()
    for fail in (True, False):
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            bad = tf.log(tf.constant(-1.0)) + tf.cast(gs, tf.float32)
            inc = tf.assign_add(gs, 1)
            try:
                with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(bad, fail_on_nan_loss=fail)]) as sess:
                    sess.run(inc)
                    out["nan_stop"] = bool(sess.should_stop())
                out["nan"] = None
            except tf.train.NanLossDuringTrainingError as err:
                out["nan"] = str(err)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = x * 3.0
        counter = iter(range(10))
        with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: float(next(counter))})]) as sess:
            out["feed_fn"] = [float(sess.run(y)) for _ in range(3)]
    try:
        with tf.Graph().as_default():
            tf.train.StopAtStepHook(last_step=3).begin()
        out["no_global_step"] = None
    except RuntimeError as err:
        out["no_global_step"] = str(err)
    for kwargs in ({}, {"save_secs": 1, "save_steps": 1}):
        try:
            tf.train.CheckpointSaverHook(workdir, **kwargs)
            out.setdefault("saver_args", []).append(None)
        except ValueError as err:
            out.setdefault("saver_args", []).append(str(err))
    return out


def chief_and_worker_session_creators(tf, workdir):
    d = os.path.join(workdir, "ckpt")
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(w, [[1.0], [2.0], [3.0]]))
            sess.run(tf.assign(gs, 7))
            saver.save(sess, os.path.join(d, "model.ckpt"), global_step=gs)
    out = {}
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=d)
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            out["restored"] = [int(sess.run(gs))] + sess.run(w).ravel().tolist()
    with tf.Graph().as_default():
        gs, w, loss, train = _model(tf)
        sm = tf.train.SessionManager()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
        sess = sm.prepare_session("", init_op=tf.global_variables_initializer(), checkpoint_dir=d)
        out["prepare"] = int(sess.run(gs))
        sess.close()
    return out


CASES = [training_with_checkpoints, out_of_range_ends_quietly, hooks_behaviour, chief_and_worker_session_creators]
