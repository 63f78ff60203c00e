import collections
import threading

import numpy as np
import pytest

import tensorweave as tf


def counter_op(counts, key, value=1.0):
    """A node that records each execution of its kernel (for pruning tests)."""
    def fn():
        counts[key] += 1
        return np.float32(value)
    return tf.py_func(fn, [], tf.float32, name=key)


def test_fetch_structures():
    a = tf.constant(1.0)
    b = tf.constant([1, 2])
    Pair = collections.namedtuple("Pair", ["x", "y"])
    with tf.Session() as sess:
        out = sess.run({"a": a, "nested": [b, (a, "Const:0")], "pair": Pair(a, b), "op": a.op})
    assert out["a"] == 1.0 and isinstance(out["a"], np.float32)
    np.testing.assert_array_equal(out["nested"][0], [1, 2])
    assert isinstance(out["nested"][1], tuple) and out["nested"][1] == (1.0, 1.0)
    assert isinstance(out["pair"], Pair) and out["pair"].x == 1.0
    assert out["op"] is None


def test_fetch_errors():
    with tf.Session() as sess:
        with pytest.raises(TypeError):
            sess.run(None)
        with pytest.raises(TypeError):
            sess.run(3)
        with pytest.raises(ValueError):
            sess.run("missing:0")


def test_feeds_are_checked():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.identity(x)
    s = tf.placeholder(tf.string, [])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[1, 2]])
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: [1, 2]})
        with pytest.raises(ValueError):
            sess.run(y, {x: [[1, 2, 3]]})
        with pytest.raises(ValueError, match="could not convert string to float"):  # TF's class
            sess.run(y, {x: [["a", "b"]]})
        with pytest.raises(TypeError):
            sess.run(y, {x: tf.constant([[1.0, 2.0]])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder"):
            sess.run(y)
        assert sess.run(s, {s: "hello"}) == b"hello"
        assert sess.run(y, {"Placeholder:0": [[3, 4]]}).tolist() == [[3, 4]]


def test_int_feed_truncates_fractional_values():
    """As TF 2.21 (tests/data/tf_feed_expected.json, float_list_int32): floats truncate."""
    i = tf.placeholder(tf.int32, [2])
    with tf.Session() as sess:
        assert sess.run(i, {i: [1.0, 2.0]}).dtype == np.int32
        assert sess.run(i, {i: [1.5, -2.7]}).tolist() == [1, -2]


def test_feed_any_tensor_cuts_graph():
    counts = collections.Counter()
    a = counter_op(counts, "a")
    b = tf.identity(a)
    c = tf.identity(b)
    with tf.Session() as sess:
        assert sess.run(c, {b: 5.0}) == 5.0
        assert counts["a"] == 0
        assert sess.run(c) == 1.0
        assert counts["a"] == 1
        # fetching a fed tensor returns the fed value
        assert sess.run(b, {b: 7.0}) == 7.0
        assert counts["a"] == 1


def test_pruning_runs_only_what_fetches_need():
    counts = collections.Counter()
    a = counter_op(counts, "a")
    b = counter_op(counts, "b")
    state = tf.Variable(0.0)
    bump = tf.assign_add(state, 1.0)   # stateful, outside the fetched subgraph
    with tf.control_dependencies([b]):
        c = tf.identity(a)
    with tf.Session() as sess:
        sess.run(state.initializer)
        sess.run(a)
        assert counts == {"a": 1}
        sess.run(c)
        assert counts == {"a": 2, "b": 1}   # control input runs too
        assert sess.run(state) == 0.0       # bump never ran
        sess.run(bump)
        assert sess.run(state) == 1.0


def test_plans_are_cached_and_extend_sees_new_ops():
    a = tf.constant(2.0)
    with tf.Session() as sess:
        sess.run(a)
        sess.run(a)
        assert len(sess._run_cache) == 1
        b = tf.identity(a)          # added after the session was created
        assert sess.run(b) == 2.0
        assert len(sess._run_cache) == 2


def test_fetched_values_do_not_alias_state():
    v = tf.Variable([1.0, 2.0])
    c = tf.constant([5.0, 6.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(v)
        got[0] = 100.0
        assert sess.run(v)[0] == 1.0
        got_c = sess.run(c)
        got_c[:] = 0
        np.testing.assert_array_equal(sess.run(c), [5.0, 6.0])


def test_kernel_error_names_node_and_user_line():
    x = tf.placeholder(tf.float32)
    y = tf.reshape(x, [2, 2])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y, {x: [1.0, 2.0, 3.0]})
    assert info.value.op is y.op
    assert "test_session.py" in str(info.value)


def test_closed_session_rejects_run():
    a = tf.constant(1.0)
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError):
        sess.run(a)


def test_context_manager_sets_defaults():
    a = tf.constant(3.0)
    g = tf.Graph()
    with g.as_default():
        b = tf.constant(4.0)
    with tf.Session(graph=g) as sess:
        assert tf.get_default_session() is sess
        assert tf.get_default_graph() is g
        assert b.eval() == 4.0
        with pytest.raises(ValueError):
            a.eval()
    assert tf.get_default_session() is None
    with pytest.raises(ValueError):
        b.eval()


def test_interactive_session_and_operation_run():
    v = tf.Variable(1.0)
    sess = tf.InteractiveSession()
    try:
        v.initializer.run()
        assert v.eval() == 1.0
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_make_callable():
    x = tf.placeholder(tf.float32, [])
    y = tf.identity(x)
    with tf.Session() as sess:
        fn = sess.make_callable([y], feed_list=[x])
        assert fn(3.0) == [3.0]


def test_config_and_run_options_accepted():
    config = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1,
                            device_count={"CPU": 2}, allow_soft_placement=True,
                            log_device_placement=False)
    a = tf.constant(1.0)
    with tf.Session(config=config) as sess:
        md = tf.RunMetadata()
        assert sess.run(a, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=md) == 1.0
        names = [d.name for d in sess.list_devices()]
    assert names == ["/job:localhost/replica:0/task:0/device:CPU:0",
                     "/job:localhost/replica:0/task:0/device:CPU:1"]
    with pytest.raises(ValueError):
        tf.ConfigProto(no_such_field=1)


def test_impossible_device_rejected_or_softened():
    with tf.device("/device:GPU:0"):
        a = tf.constant(1.0)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot assign a device"):
            sess.run(a)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(a) == 1.0


def test_concurrent_runs_on_one_session():
    x = tf.placeholder(tf.float32, [None])
    y = tf.identity(x)
    v = tf.Variable(0.0)
    inc = tf.assign_add(v, 1.0, use_locking=True)
    errors = []
    with tf.Session() as sess:
        sess.run(v.initializer)

        def worker(k):
            try:
                for i in range(200):
                    np.testing.assert_array_equal(sess.run(y, {x: [k, i]}), [k, i])
                    sess.run(inc.op)
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert sess.run(v) == 800.0


def test_session_reset_clears_containers_and_closes_the_sessions():
    with tf.container("experiment"):
        v = tf.Variable(1.0)
    w = tf.Variable(2.0)
    with tf.Session() as sess:
        sess.run([v.initializer, w.initializer])
        tf.Session.reset("", ["experiment"])
        # TF's direct-session factory resets the containers and closes the sessions
        with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
            sess.run(w)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)


def test_concurrent_first_runs_build_distinct_plans_safely():
    """Several threads compile and run different (feeds, fetches) signatures at once: each gets
    its own plan and its own answers."""
    x = tf.placeholder(tf.float32, [])
    outputs = [x * float(k) + tf.constant(float(k)) for k in range(8)]
    barrier = threading.Barrier(4)
    results, errors = {}, []
    with tf.Session() as sess:

        def worker(t):
            try:
                barrier.wait(10)
                for k in range(t, 8, 4):
                    for i in range(20):
                        got = sess.run(outputs[k] if i % 2 else [outputs[k], x], {x: float(i)})
                        value = got if i % 2 else got[0]
                        assert value == float(i) * k + k
                    results[k] = True
            except Exception as err:  # noqa: BLE001
                errors.append(err)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and sorted(results) == list(range(8))
        assert len(sess._run_cache) == 16


def test_session_reset_never_frees_state_under_running_steps():
    """8 threads update and read a variable while tf.Session.reset("") runs: in-flight steps
    finish or end with CancelledError (TF 2.21: CancelledError), never "uninitialized value"."""
    v = tf.Variable(0.0)
    update, read = tf.assign_add(v, 1.0), v + 0.0
    sess = tf.Session()
    sess.run(v.initializer)
    outcomes, started = [], threading.Event()

    def worker():
        for i in range(100000):
            try:
                sess.run([update, read])
                started.set()
            except tf.errors.CancelledError:
                outcomes.append("cancelled")
                return
            except Exception as err:  # noqa: BLE001  (what the test is looking for)
                outcomes.append(err)
                return

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    assert started.wait(10)
    tf.Session.reset("")
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert outcomes == ["cancelled"] * 8
