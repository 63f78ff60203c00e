"""Failures and recovery across processes (white paper 3.3; OSDI 4.3): real task processes on
127.0.0.1 (tests/distributed/failure_tasks.py), killed (SIGKILL), stopped (SIGSTOP) and
restarted; every wait is bounded and every process started here is ended by its pid.

- a killed PS or worker, or a stopped PS, fails the running step within 5 s with
  UnavailableError/AbortedError naming the task, the step ends on every surviving task, and
  later steps on the surviving tasks work;
- ConfigProto.operation_timeout_in_ms bounds a step blocked on a PS;
- MonitoredTrainingSession re-creates its session after the PS restarts, the chief restores the
  latest checkpoint and training reaches its StopAtStepHook target;
- a restarted task refuses the graphs registered before and the values pushed to the old one;
- the done-queue idiom ends every process of a cluster with exit status 0;
- a PS step waiting for a worker ends when that worker, the step's master, dies.
"""
import contextlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import rpc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TASKS = os.path.join(HERE, "failure_tasks.py")
PS0 = "/job:ps/replica:0/task:0"
DETECT_S = 5.0  # the error must arrive within this after a task fails


def free_addresses(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """Task processes of one test: started with this worktree's tensorweave, each ended by its
    pid when the test ends (a stopped one is continued first)."""

    def __init__(self, spec):
        self.spec = spec
        self.procs = []

    def start(self, mode, job, task, *args, wait_for="up"):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.Popen([sys.executable, TASKS, mode, json.dumps(self.spec), job, str(task), *map(str, args)],
                                stdout=subprocess.PIPE, env=env, cwd=ROOT)
        self.procs.append(proc)
        if wait_for:
            assert read_line(proc, 30) == wait_for
        return proc

    def address(self, job, task):
        return self.spec[job][task]

    def status(self, job, task):
        """The task's GetStatus reply header (incarnation, running steps)."""
        client = rpc.TaskClient(f"/job:{job}/replica:0/task:{task}", self.address(job, task))
        try:
            return client.call("GetStatus", {}, timeout=5.0, wait_for_ready=True).header
        finally:
            client.close()

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGCONT)
                    os.kill(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            if proc.stdout:
                proc.stdout.close()


def read_line(proc, timeout):
    """The process's next output line, within `timeout` seconds."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"process {proc.pid} printed nothing within {timeout} s"
    return proc.stdout.readline().decode().strip()


def wait_until(predicate, timeout, interval=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


@contextlib.contextmanager
def cluster(ps=1, workers=1):
    addresses = free_addresses(ps + workers)
    c = Cluster({"ps": addresses[:ps], "worker": addresses[ps:]})
    servers = []
    c.servers = servers
    try:
        yield c
    finally:
        for server in servers:
            server.stop()
        c.stop_all()


def in_process_worker(c, task=0):
    server = tf.train.Server(c.spec, job_name="worker", task_index=task)
    c.servers.append(server)
    return server


class StepLoop:
    """Runs a step over and over on a thread until it fails; records when and how."""

    def __init__(self, sess, fetch, feed_dict=None):
        self.error, self.failed_at, self.steps = None, None, 0
        self._sess, self._fetch, self._feed = sess, fetch, feed_dict
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        try:
            while True:
                self._sess.run(self._fetch, self._feed)
                self.steps += 1
        except Exception as err:  # noqa: BLE001  (the test looks at it)
            self.failed_at, self.error = time.monotonic(), err

    def wait_failed(self, since, timeout=DETECT_S + 5):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the step did not fail (hang)"
        return self.failed_at - since


def assert_names_task(err, task, within, limit=DETECT_S):
    assert isinstance(err, (tf.errors.UnavailableError, tf.errors.AbortedError)), repr(err)
    assert task in err.message, err.message
    assert within < limit, f"error after {within:.2f} s"


def test_ps_killed_mid_training_fails_the_step_and_the_worker_goes_on():
    with cluster() as c:
        ps = c.start("server", "ps", 0)
        server = in_process_worker(c)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [])
            w = tf.Variable(1.0, name="w")
            w_add = tf.assign_add(w, 1.0)
            y = v * 0.5 + x
        train = tf.assign_add(v, y - v)  # v <- 0.5 v + x, read on the worker, updated on the PS
        sess = tf.Session(server.target)
        sess.run(tf.global_variables_initializer())
        assert sess.run(train, {x: 1.0}) == pytest.approx(1.5)
        loop = StepLoop(sess, train, {x: 1.0})
        assert wait_until(lambda: loop.steps >= 20, 10)
        killed = time.monotonic()
        ps.kill()
        loop.wait_failed(killed)
        assert_names_task(loop.error, PS0, loop.failed_at - killed)
        # The step ended on the surviving worker, whose own steps go on; steps using the PS fail.
        assert wait_until(lambda: c.status("worker", 0)["steps"] == 0, DETECT_S)
        assert sess.run(w_add) == 2.0
        with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError), match=PS0):
            sess.run(train, {x: 1.0})
        assert sess.run(w_add) == 3.0
        sess.close()


def test_worker_killed_mid_step_ends_the_step_on_every_task():
    """Worker 1's partition blocks (a queue nobody fills); the PS waits for its value and
    worker 0 for the PS's. Killing worker 1 fails the step naming it; the PS's and worker 0's
    parts end (the master's AbortStep), and they run later steps."""
    with cluster(ps=1, workers=2) as c:
        c.start("server", "ps", 0)
        worker1 = c.start("server", "worker", 1)
        server = in_process_worker(c)
        with tf.device("/job:worker/task:1"):
            never = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="never_filled").dequeue() * 2.0
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
            add = tf.assign_add(v, never)
            bump = tf.assign_add(v, 1.0)
        with tf.device("/job:worker/task:0"):
            out = add + 1.0
            read = v * 10.0
        sess = tf.Session(server.target)
        sess.run(v.initializer)
        loop = StepLoop(sess, out)
        assert wait_until(lambda: c.status("ps", 0)["steps"] == 1 and c.status("worker", 1)["steps"] == 1, 10)
        killed = time.monotonic()
        worker1.kill()
        loop.wait_failed(killed)
        assert_names_task(loop.error, "/job:worker/replica:0/task:1", loop.failed_at - killed)
        assert wait_until(lambda: c.status("ps", 0)["steps"] == 0 and c.status("worker", 0)["steps"] == 0,
                          DETECT_S)
        assert sess.run(bump) == 2.0
        assert sess.run(read) == 20.0
        sess.close()


def test_stopped_ps_is_detected_and_resumes():
    """SIGSTOP: the PS's process lives but answers nothing (the worker's push to it blocks);
    the health check fails the step within 5 s. After SIGCONT the PS is healthy again."""
    with cluster() as c:
        ps = c.start("server", "ps", 0)
        server = in_process_worker(c)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [])
            w = tf.Variable(1.0, name="w")
            w_add = tf.assign_add(w, 1.0)
            doubled = x * 2.0
        train = tf.assign_add(v, doubled)  # the worker pushes `doubled` to the PS every step
        sess = tf.Session(server.target)
        sess.run(tf.global_variables_initializer())
        loop = StepLoop(sess, train, {x: 1.0})
        assert wait_until(lambda: loop.steps >= 20, 10)
        stopped = time.monotonic()
        os.kill(ps.pid, signal.SIGSTOP)
        try:
            loop.wait_failed(stopped)
            assert_names_task(loop.error, PS0, loop.failed_at - stopped)
            assert "stopped answering" in loop.error.message
            assert wait_until(lambda: c.status("worker", 0)["steps"] == 0, 1.0)
            assert sess.run(w_add) == 2.0
            with pytest.raises(tf.errors.UnavailableError, match=PS0):
                sess.run(train, {x: 1.0})
        finally:
            os.kill(ps.pid, signal.SIGCONT)
        # Continued, the PS answers the health check again: steps using it work (same state).

        def step_works():
            try:
                sess.run(train, {x: 1.0})
                return True
            except tf.errors.UnavailableError:
                return False
        assert wait_until(step_works, 10, interval=0.2)
        before = sess.run(v)
        assert sess.run(train, {x: 1.0}) == before + 2.0
        sess.close()


def test_operation_timeout_bounds_a_step_blocked_on_the_ps():
    """A dequeue waiting on the PS, then a push to a stopped PS: both end at the session's
    operation timeout (before the health check would notice the stop)."""
    with cluster() as c:
        ps = c.start("server", "ps", 0)
        server = in_process_worker(c)
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
            dequeue = q.dequeue()
            enqueue = q.enqueue(7.0)
            v = tf.Variable(0.0, name="v")
        with tf.device("/job:worker/task:0"):
            out = dequeue + 1.0
            x = tf.placeholder(tf.float32, [])
            doubled = x * 2.0
        push_step = tf.assign_add(v, doubled)
        sess = tf.Session(server.target, config=tf.ConfigProto(operation_timeout_in_ms=1000))
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(out)
        assert 0.9 < time.monotonic() - start < 4.0
        assert wait_until(lambda: c.status("ps", 0)["steps"] == 0, 2.0)
        sess.run(enqueue)
        assert sess.run(out) == 8.0
        sess.run(v.initializer)
        assert sess.run(push_step, {x: 1.0}) == 2.0
        os.kill(ps.pid, signal.SIGSTOP)
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(push_step, {x: 1.0})
        assert time.monotonic() - start < 4.0
        sess.close()


def test_restarted_task_refuses_old_graphs_and_pushes():
    with cluster() as c:
        ps = c.start("server", "ps", 0)
        server = in_process_worker(c)
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(5.0, name="v")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [])
        train = tf.assign_add(v, x)  # the worker pushes x to the PS
        sess = tf.Session(server.target)
        sess.run(v.initializer)
        assert sess.run(train, {x: 1.0}) == 6.0
        old = c.status("ps", 0)
        ps.kill()
        ps.wait(10)
        c.start("server", "ps", 0)
        new = c.status("ps", 0)
        assert new["incarnation"] != old["incarnation"]
        # Steps over graphs registered before the restart fail with AbortedError, never a value.
        seen = []

        def aborted():
            with pytest.raises((tf.errors.AbortedError, tf.errors.UnavailableError)) as info:
                sess.run(train, {x: 1.0})
            seen.append(info.value)
            return isinstance(info.value, tf.errors.AbortedError)
        assert wait_until(aborted, 10, interval=0.2), seen
        assert PS0 in seen[-1].message and "restarted" in seen[-1].message
        # A value pushed to the old incarnation, and a registration naming it, are refused.
        client = rpc.TaskClient(PS0, c.address("ps", 0))
        try:
            device, old_incarnation = old["devices"][0][0], old["devices"][0][2]
            key = ["/job:worker/replica:0/task:0/device:CPU:0", 1, device, "x", "", 0]
            with pytest.raises(tf.errors.AbortedError, match="restarted"):
                client.call("PushTensor", {"step": 1, "key": key, "dst_incarnation": old_incarnation},
                            [("value", np.float32(1.0))], timeout=5)
            with pytest.raises(tf.errors.AbortedError, match="restarted"):
                client.call("RegisterGraph", {"incarnations": {device: old_incarnation}},
                            [("graph_def", np.frombuffer(tf.GraphDef().SerializeToString(), np.uint8))], timeout=5)
        finally:
            client.close()
        sess.close()
        # A new session sees the restarted task as it is: its variables are gone.
        with tf.Session(server.target) as fresh:
            with pytest.raises(tf.errors.FailedPreconditionError):
                fresh.run(v)
            fresh.run(v.initializer)
            assert fresh.run(train, {x: 2.0}) == 7.0


class _Restart(tf.train.SessionRunHook):
    """Kills the PS after step `at` and starts it again (a new process on the same address)."""

    def __init__(self, c, at):
        self.c, self.at, self.killed_at_step = c, at, None

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(tf.train.get_global_step())

    def after_run(self, run_context, run_values):
        if self.killed_at_step is None and run_values.results >= self.at:
            self.killed_at_step = run_values.results
            ps = self.c.procs[0]
            ps.kill()
            ps.wait(10)
            self.c.start("server", "ps", 0)


class _Record(tf.train.SessionRunHook):
    """What each new session holds right after it is created, and the latest checkpoint's."""

    def __init__(self, checkpoint_dir, variable):
        self.checkpoint_dir, self.variable, self.created = checkpoint_dir, variable, []

    def after_create_session(self, session, coord):
        step, value = session.run([tf.train.get_global_step(), self.variable])
        latest = tf.train.latest_checkpoint(self.checkpoint_dir)
        saved = None
        if latest:
            reader = tf.train.load_checkpoint(latest)
            saved = (reader.get_tensor("global_step"), reader.get_tensor(self.variable.op.name))
        self.created.append(((step, value), saved))


def test_monitored_training_session_recovers_from_a_ps_restart(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    checkpoint_dir = str(tmp_path / "ckpt")
    with cluster() as c:
        c.start("server", "ps", 0)
        server = in_process_worker(c)
        with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            global_step = tf.train.get_or_create_global_step()
            w = tf.Variable([0.0, 0.0], name="w")
            data = tf.constant([[1.0, 2.0], [3.0, 1.0], [0.5, -1.0]])
            target = tf.constant([5.0, 5.0, -1.5])
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(data * w, axis=1) - target))
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
        restart = _Restart(c, at=7)
        record = _Record(checkpoint_dir, w)
        losses = []
        with tf.train.MonitoredTrainingSession(
                master=server.target, is_chief=True, checkpoint_dir=checkpoint_dir, save_checkpoint_steps=5,
                save_summaries_steps=None, log_step_count_steps=None,
                hooks=[tf.train.StopAtStepHook(last_step=15), restart, record]) as sess:
            while not sess.should_stop():
                losses.append(sess.run([train, loss])[1])
        assert restart.killed_at_step == 7
        # A run failed naming the PS (down, or back with a new incarnation) and the session
        # was created again: recovery from run, not only at creation.
        recovered = [r.getMessage() for r in caplog.records
                     if r.getMessage().startswith("An error was raised. This may be due to a preemption")]
        assert len(recovered) == 1 and PS0 in recovered[0], recovered
        assert len(record.created) == 2
        (step0, _), saved0 = record.created[0]
        assert step0 == 0 and saved0[0] == 0  # the chief's first checkpoint, before training
        (step, value), (saved_step, saved_value) = record.created[1]
        assert saved_step == 5 and step == saved_step      # restored right after recovery
        np.testing.assert_array_equal(value, saved_value)
        reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(checkpoint_dir))
        assert reader.get_tensor("global_step") == 15
        assert losses[-1] < losses[0] / 4


def test_done_queue_shuts_the_cluster_down():
    """Each worker process puts a token on each PS task's done queue (one queue per PS, shared
    by name, fed by two clients); each PS dequeues one per worker, stops its server and exits 0."""
    with cluster(ps=2, workers=2) as c:
        ps = [c.start("done_ps", "ps", k, 2) for k in range(2)]
        workers = [c.start("done_worker", "worker", k, wait_for=None) for k in range(2)]
        for proc in workers + ps:
            assert proc.wait(30) == 0
        for proc in ps:
            assert "tokens [0, 1]" in proc.stdout.read().decode().split("\n")


def test_ps_step_ends_when_its_master_dies():
    """Worker 1 is the client and master of a step the PS waits in (for a value worker 1 never
    produces). Killing worker 1 leaves no master to send AbortStep: the PS ends the step because
    the master's RunGraph call ended, and serves other clients."""
    with cluster(ps=1, workers=2) as c:
        c.start("server", "ps", 0)
        worker1 = c.start("blocked_step", "worker", 1)
        assert read_line(worker1, 30) == "running"
        assert wait_until(lambda: c.status("ps", 0)["steps"] == 1, 10)
        killed = time.monotonic()
        worker1.kill()
        assert wait_until(lambda: c.status("ps", 0)["steps"] == 0, DETECT_S)
        assert time.monotonic() - killed < DETECT_S
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
            bump = tf.assign_add(v, 1.0)
        with tf.Session(f"grpc://{c.address('ps', 0)}", config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
            assert sess.run(bump) == 1.0  # the variable the dead client initialized, still there
