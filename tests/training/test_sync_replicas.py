"""tf.train.SyncReplicasOptimizer within one process: several replicas' train ops (each built by
its own SyncReplicasOptimizer, sharing the accumulators and the token queue by name, as the
workers of a cluster do) run from threads on one session. Two replicas train as the
averaged-gradient computation (TF's test2Workers sequence, NumPy reference); with a backup
replica a straggler does not hold the steps up; the graph is TF's."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf

LR = 0.1
W0 = np.array([1.0, -2.0], np.float32)
X = [np.array([0.5, 1.0], np.float32), np.array([2.0, -1.0], np.float32), np.array([1.0, 1.0], np.float32)]


def _grad(w, x):
    return 2.0 * w * x  # of loss = sum(w * w * x)


def _build(num_workers, replicas_to_aggregate, sparse=False):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(W0, name="w")
    table = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2), name="table")
    replicas = []
    for i in range(num_workers):
        with tf.name_scope(f"worker_{i}"):
            loss = tf.reduce_sum(w * w * tf.constant(X[i]))
            if sparse:
                loss += tf.reduce_sum(tf.gather(table, tf.constant([i, 2])))
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR),
                                             replicas_to_aggregate=replicas_to_aggregate,
                                             total_num_replicas=num_workers)
        train_op = opt.minimize(loss, global_step=gs)
        replicas.append((opt, train_op, opt.make_session_run_hook(is_chief=i == 0)))
    return gs, w, table, replicas


def _start(sess, replicas):
    coord = tf.train.Coordinator()
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    for _, _, hook in replicas:
        hook.begin()
    for _, _, hook in replicas:
        hook.after_create_session(sess, coord)
    return coord


def _run_all(sess, ops):
    threads = [threading.Thread(target=sess.run, args=(op,)) for op in ops]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
        assert not t.is_alive()


def _wait_step(sess, gs, step):
    deadline = time.time() + 10
    while sess.run(gs) != step:
        assert time.time() < deadline, f"global step stuck at {sess.run(gs)}"
        time.sleep(0.01)


def test_two_replicas_train_as_the_averaged_gradient():
    with tf.Graph().as_default():
        gs, w, _, replicas = _build(2, 2)
        opt0, opt1 = replicas[0][0], replicas[1][0]
        sess = tf.Session()
        coord = _start(sess, replicas)
        train = [r[1] for r in replicas]
        ref = W0.astype(np.float64)
        assert sess.run(gs) == 0 and sess.run(opt1._local_step) == 0
        sess.run(train[0])
        sess.run(train[1])
        _wait_step(sess, gs, 1)
        ref = ref - LR * (_grad(ref, X[0]) + _grad(ref, X[1])) / 2
        np.testing.assert_allclose(sess.run(w), ref, rtol=1e-5)
        # The first tokens carry step 0: the next gradients are stale and dropped (TF's
        # sequence), the replicas only take the step-1 tokens.
        assert sess.run(opt0._local_step) == 0 and sess.run(opt1._local_step) == 0
        sess.run(train[0])
        sess.run(train[1])
        time.sleep(0.1)
        assert sess.run(gs) == 1
        assert sess.run(opt0._local_step) == 1 and sess.run(opt1._local_step) == 1
        np.testing.assert_allclose(sess.run(w), ref, rtol=1e-5)
        # From now on the token queue is empty: both replicas must contribute to every step.
        for step in range(2, 6):
            _run_all(sess, train)
            assert sess.run(gs) == step
            ref = ref - LR * (_grad(ref, X[0]) + _grad(ref, X[1])) / 2
            np.testing.assert_allclose(sess.run(w), ref, rtol=1e-5)
        coord.request_stop()
        sess.close()
        coord.join(stop_grace_period_secs=5)


def test_sparse_gradients_are_averaged_row_by_row():
    with tf.Graph().as_default():
        gs, w, table, replicas = _build(2, 2, sparse=True)
        sess = tf.Session()
        coord = _start(sess, replicas)
        train = [r[1] for r in replicas]
        sess.run(train[0])
        sess.run(train[1])
        _wait_step(sess, gs, 1)
        # rows 0 and 1 come from one replica each, row 2 from both: each row is its own mean
        expected = np.arange(8, dtype=np.float32).reshape(4, 2)
        expected[[0, 1, 2]] -= LR
        np.testing.assert_allclose(sess.run(table), expected, rtol=1e-6)
        coord.request_stop()
        sess.close()
        coord.join(stop_grace_period_secs=5)


def test_backup_replica_straggling_does_not_block_steps():
    with tf.Graph().as_default():
        gs, w, _, replicas = _build(3, 2)
        sess = tf.Session()
        coord = _start(sess, replicas)
        target = 8
        stop = threading.Event()

        def worker(i, delay):
            while not stop.is_set():
                if delay:
                    time.sleep(delay)
                try:
                    sess.run(replicas[i][1])
                except tf.errors.OpError:
                    return

        threads = [threading.Thread(target=worker, args=(i, 30.0 if i == 2 else 0.0), daemon=True)
                   for i in range(3)]
        start = time.time()
        for t in threads:
            t.start()
        deadline = start + 20
        while sess.run(gs) < target:
            assert time.time() < deadline, f"stuck at step {sess.run(gs)} with a straggler"
            time.sleep(0.01)
        assert time.time() - start < 20  # the straggler sleeps 30 s before its first step
        # The averaged steps move w[0] toward 0 (both fast replicas' x[0] are positive). w[1]'s
        # direction depends on which replica's gradients filled each aggregation (x[1] is 1 for
        # one, -1 for the other): a race of the threads, so it is not asserted.
        assert abs(sess.run(w)[0]) < abs(W0[0])
        stop.set()
        coord.request_stop()
        sess.close()
        coord.join(stop_grace_period_secs=5)


def test_graph_is_tensorflows():
    with tf.Graph().as_default() as g:
        gs, w, _, replicas = _build(2, 2)
        opt = replicas[0][0]
        types = {op.name: op.type for op in g.get_operations()}
        assert types["sync_replicas/conditional_accumulator"] == "ResourceConditionalAccumulator"
        assert types["sync_token_q"] == "FIFOQueueV2" and types["dummy_queue"] == "FIFOQueueV2"
        accum = g.get_operation_by_name("sync_replicas/conditional_accumulator")
        assert accum.get_attr("shared_name") == b"w:0/grad_accum"  # bytes, as TF's get_attr
        assert opt._local_step in tf.local_variables() and opt._local_step not in tf.global_variables()
        runner = opt.get_chief_queue_runner()
        assert runner.queue.name.startswith("dummy_queue")
        assert opt.get_init_tokens_op().type == "QueueEnqueueManyV2"
        with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 1 \(given\) vs 2"):
            _too_few_tokens()
        fresh = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        with pytest.raises(ValueError, match="after apply_gradients"):
            fresh.get_chief_queue_runner()
        with pytest.raises(ValueError, match="Global step is required"):
            fresh.apply_gradients([(tf.constant([1.0, 1.0]), w)])
        with pytest.raises(ValueError, match="apply_gradient should be called"):
            fresh.make_session_run_hook(True).begin()


def _too_few_tokens():
    gs = tf.train.get_or_create_global_step()
    v = tf.Variable(1.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 3, 1)
    opt.minimize(v * v, global_step=gs)
    opt.get_init_tokens_op(num_tokens=1)


def test_variable_averages_follow_each_synchronous_update():
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        w = tf.Variable(W0, name="w")
        ema = tf.train.ExponentialMovingAverage(0.5)
        replicas = []
        for i in range(2):
            loss = tf.reduce_sum(w * w * tf.constant(X[i]))
            # only the chief's sync op runs; in one graph only it may own the averages
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), 2,
                                                 variable_averages=ema if i == 0 else None,
                                                 variables_to_average=[w])
            replicas.append((opt, opt.minimize(loss, global_step=gs), opt.make_session_run_hook(i == 0)))
        shadow = ema.average(w)
        sess = tf.Session()
        coord = _start(sess, replicas)
        sess.run(replicas[0][1])
        sess.run(replicas[1][1])
        _wait_step(sess, gs, 1)
        w1 = W0 - LR * (_grad(W0, X[0]) + _grad(W0, X[1])) / 2
        deadline = time.time() + 5
        while not np.allclose(sess.run(shadow), 0.5 * W0 + 0.5 * w1, rtol=1e-5) and time.time() < deadline:
            time.sleep(0.01)  # the average follows the token enqueue in the chief's sync op
        np.testing.assert_allclose(sess.run(shadow), 0.5 * W0 + 0.5 * w1, rtol=1e-5)
        coord.request_stop()
        sess.close()
        coord.join(stop_grace_period_secs=5)
