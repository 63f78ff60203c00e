"""tf.train.Supervisor programs run under either library (`tf` is passed in):
make_tf_supervisor_fixtures.py records what TensorFlow does, tests/training/test_supervisor.py
checks tensorweave against it. Each case returns JSON-able facts. The services run on timers, so
the cases record only what does not depend on timing: a program waits for the checkpoint it
needs instead of counting how many the timer wrote."""
import glob
import os
import time

import numpy as np


def _model(tf):
    gs = tf.train.get_or_create_global_step()
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.3], [0.2]]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    tf.summary.scalar("loss", loss)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, w, train


def _events(tf, d):
    """Every event of the logdir's event files as (kind, step): summaries by tag, session logs
    by status, graphs by field."""
    out = []
    for path in sorted(glob.glob(os.path.join(d, "events.out.tfevents.*"))):
        for e in tf.train.summary_iterator(path):
            if e.HasField("summary"):
                out += [("summary:" + v.tag, e.step) for v in e.summary.value]
            elif e.HasField("session_log"):
                out.append(("session_log:%d" % e.session_log.status, e.step))
            else:
                out.append((e.WhichOneof("what"), e.step))
    return out


def _wait_for_checkpoint(tf, d, step, secs=20.0):
    """Waits (the timer saves every second) until the latest checkpoint is at `step`."""
    deadline = time.time() + secs
    while time.time() < deadline:
        latest = tf.train.latest_checkpoint(d)
        if latest and latest.endswith("-%d" % step):
            return os.path.basename(latest)
        time.sleep(0.05)
    return None


def training_then_restart(tf, workdir):
    d = os.path.join(workdir, "logdir")
    out = {}
    with tf.Graph().as_default():
        gs, w, train = _model(tf)
        sv = tf.train.Supervisor(logdir=d, save_model_secs=1, save_summaries_secs=1)
        out["properties"] = {
            "is_chief": sv.is_chief, "save_path": os.path.relpath(sv.save_path, workdir),
            "save_model_secs": sv.save_model_secs, "save_summaries_secs": sv.save_summaries_secs,
            "global_step": sv.global_step.name, "ready_for_local_init_op": sv.ready_for_local_init_op is None,
            "has": [x is not None for x in (sv.init_op, sv.ready_op, sv.summary_op, sv.saver,
                                            sv.summary_writer, sv.session_manager, sv.coord)],
            "init_feed_dict": sv.init_feed_dict, "finalized": tf.get_default_graph().finalized,
            "use_default": tf.train.Supervisor.USE_DEFAULT}
        steps = []
        with sv.managed_session() as sess:
            out["start_step"] = int(sess.run(gs))
            for _ in range(20):
                if sv.should_stop():
                    break
                steps.append(int(sess.run([train, gs])[1]))
            out["waited_for"] = _wait_for_checkpoint(tf, d, 20)
            out["first_w"] = sess.run(w).ravel().tolist()
            custom = tf.Summary(value=[tf.Summary.Value(tag="custom", simple_value=1.5)])
            sv.summary_computed(sess, custom)
            sv.summary_computed(sess, custom.SerializeToString(), global_step=99)
        out["steps"] = steps
        out["should_stop_after"] = sv.should_stop()
        out["graph_pbtxt"] = os.path.exists(os.path.join(d, "graph.pbtxt"))
    with tf.Graph().as_default():
        gs, w, train = _model(tf)
        sv = tf.train.Supervisor(logdir=d, save_model_secs=0, save_summaries_secs=0)
        with sv.managed_session() as sess:
            out["restored_step"] = int(sess.run(gs))
            out["restored_w"] = sess.run(w).ravel().tolist()
            sess.run(train)
            out["after_one_more"] = int(sess.run(gs))
    events = _events(tf, d)
    out["event_kinds"] = sorted({k for k, _ in events})
    out["starts"] = [s for k, s in events if k == "session_log:1"]
    out["stops"] = [s for k, s in events if k == "session_log:2"]
    out["custom"] = [s for k, s in events if k == "summary:custom"]
    out["checkpoint_steps_are_saved_steps"] = all(s in [0] + steps for k, s in events if k == "session_log:3")
    out["checkpoint_files"] = sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "model.ckpt-20*")))
    return out


def not_chief(tf, workdir):
    out = {}
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        try:
            tf.train.Supervisor(is_chief=False)
            out["no_device"] = None
        except ValueError as err:
            out["no_device"] = type(err).__name__
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            gs = tf.train.get_or_create_global_step()
            tf.Variable(1.0, name="v")
        sv = tf.train.Supervisor(is_chief=False, logdir=os.path.join(workdir, "worker"), recovery_wait_secs=0.2)
        out["properties"] = [sv.is_chief, sv.save_path, sv.summary_writer, sv.save_model_secs,
                             sv.save_summaries_secs, sv.global_step.name == gs.name]
        try:
            sv.start_standard_services(None)
            out["services"] = None
        except RuntimeError as err:
            out["services"] = str(err)
        t0 = time.time()
        try:
            sv.prepare_or_wait_for_session(max_wait_secs=1)
            out["wait"] = None
        except tf.errors.DeadlineExceededError as err:
            out["wait"] = [type(err).__name__, err.message]
        out["waited_about_a_second"] = 0.5 < time.time() - t0 < 5.0
        out["logdir_written"] = os.path.exists(os.path.join(workdir, "worker"))
    return out


def out_of_range_and_errors(tf, workdir):
    out = {}
    with tf.Graph().as_default():
        q = tf.FIFOQueue(5, tf.float32)
        enq = q.enqueue_many([[1.0, 2.0, 3.0]])
        close = q.close()
        deq = q.dequeue()
        sv = tf.train.Supervisor(logdir=None)
        got = []
        with sv.managed_session() as sess:
            sess.run(enq)
            sess.run(close)
            while not sv.should_stop():
                got.append(float(sess.run(deq)))
        out["got"] = got
        out["should_stop"] = sv.should_stop()
    with tf.Graph().as_default():
        v = tf.Variable(2.0)
        sv = tf.train.Supervisor()
        try:
            with sv.managed_session() as sess:
                out["v"] = float(sess.run(v))
                raise ValueError("boom")
        except ValueError as err:
            out["raised"] = str(err)
        out["stopped_after_raise"] = sv.should_stop()
        with sv.managed_session() as sess:  # a new session clears the stop request
            out["cleared"] = sv.should_stop()
            calls = []
            thread = sv.loop(0.01, calls.append, args=(1,))
            deadline = time.time() + 10
            while len(calls) < 3 and time.time() < deadline:
                time.sleep(0.01)
        out["loop_ran"] = len(calls) >= 3
        out["loop_joined"] = not thread.is_alive()
        try:
            sv.summary_computed(None, tf.Summary())
            out["summary_computed"] = None
        except RuntimeError as err:
            out["summary_computed"] = str(err)
        out["services_without_logdir"] = sv.start_standard_services(None)
        try:
            tf.constant(1.0)
            out["add_after_finalize"] = None
        except RuntimeError as err:
            out["add_after_finalize"] = type(err).__name__
    return out


def init_pieces(tf, workdir):
    out = {}
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [])
        a = tf.Variable(p, name="a")
        b = tf.Variable(0.0, name="b")
        set_b = tf.assign(b, 7.0)
        loc = tf.Variable(5.0, name="loc", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.Variable(1.0, name="global_step")  # a float "global_step" is not the global step
        sv = tf.train.Supervisor(init_feed_dict={p: 3.0}, init_fn=lambda sess: sess.run(set_b))
        out["global_step"] = sv.global_step
        out["summary_op"] = sv.summary_op
        out["saver"] = sv.saver is not None
        sess = sv.prepare_or_wait_for_session()
        out["values"] = [float(x) for x in sess.run([a, b, loc])]
        sv.stop()
        sess.close()
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        sv = tf.train.Supervisor(init_op=None, ready_op=None, saver=None, summary_op=None, global_step=None,
                                 local_init_op=None)
        out["nones"] = [x is None for x in (sv.init_op, sv.ready_op, sv.saver, sv.summary_op, sv.global_step)]
        try:
            sv.prepare_or_wait_for_session()
            out["nothing_to_init"] = None
        except RuntimeError as err:
            out["nothing_to_init"] = type(err).__name__
        sv.stop()
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        init = tf.global_variables_initializer()
        sv = tf.train.Supervisor(init_op=init, ready_op=None, local_init_op=None)
        sess = sv.prepare_or_wait_for_session()
        out["explicit_init"] = [float(sess.run("v:0")), sv.init_op is init]
        sv.stop()
        sess.close()
    return out


def queue_runners_feed_the_loop(tf, workdir):
    """managed_session starts the graph's queue runners; the input's epoch counter is a local
    variable (the default local_init_op initializes it); the end of the epochs ends the loop."""
    with tf.Graph().as_default():
        n = tf.train.range_input_producer(4, num_epochs=2, shuffle=False).dequeue()
        sv = tf.train.Supervisor(logdir=os.path.join(workdir, "q"), save_model_secs=0, save_summaries_secs=0)
        got = []
        with sv.managed_session() as sess:
            while not sv.should_stop():
                got.append(int(sess.run(n)))
        return {"got": got, "should_stop": sv.should_stop(),
                "queue_runners": len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))}


CASES = [training_then_restart, not_chief, out_of_range_and_errors, init_pieces, queue_runners_feed_the_loop]
