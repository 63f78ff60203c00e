"""Control flow whose branches or loop bodies return a reference (the output of assign_add):
the value is fetched, as in TF, whose executor reads a reference wherever an op takes a value
(values recorded from TF 2.21 compat.v1 graph mode)."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def var_and_pred():
    return tf.Variable(1.0), tf.placeholder(tf.bool, [])


def _run(fetches, feeds_list, init):
    with tf.Session() as sess:
        sess.run(init)
        return [sess.run(fetches, feeds) for feeds in feeds_list]


def test_cond_both_branches_assign(var_and_pred):
    v, p = var_and_pred
    out = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, 10.0))
    # as TF: a Merge of references is a RefMerge, and its output a reference
    assert out.op.type == "RefMerge" and out.dtype == tf.float32._as_ref
    assert out.shape.as_list() == [] and out.op.outputs[1].dtype == tf.int32
    got = _run(out, [{p: True}, {p: False}, {p: True}], v.initializer)
    assert got == [2.0, 12.0, 13.0]
    assert all(isinstance(x, np.float32) for x in got)


def test_cond_one_branch_assigns(var_and_pred):
    v, p = var_and_pred
    out = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.identity(v))
    other = tf.cond(p, lambda: v, lambda: tf.assign(v, 5.0))
    assert out.op.type == other.op.type == "Merge" and out.dtype == other.dtype == tf.float32
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(out, {p: True}) == 2.0
        assert sess.run(out, {p: False}) == 2.0
        assert sess.run(other, {p: False}) == 5.0
        assert sess.run(other, {p: True}) == 5.0


def test_case_returns_values(var_and_pred):
    v, p = var_and_pred
    out = tf.case([(p, lambda: tf.assign_add(v, 2.0))], default=lambda: tf.assign_sub(v, 1.0))
    assert out.op.type == "RefMerge"
    assert _run(out, [{p: True}, {p: False}, {p: False}], v.initializer) == [3.0, 2.0, 1.0]


def test_while_body_returns_assign_add():
    v = tf.Variable(1.0)
    i, x = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, tf.assign_add(v, 1.0)),
                         [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([i, x]) == [3, 4.0]
        assert sess.run(x) == 7.0


def test_cond_inside_while_returns_assign():
    v = tf.Variable(0.0)

    def body(i, x):
        y = tf.cond(tf.equal(i % 2, 0), lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, 100.0))
        return i + 1, y

    _, x = tf.while_loop(lambda i, x: i < 4, body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(x) == 202.0


def test_tuple_and_group_with_refs():
    v = tf.Variable(1.0)
    t = tf.tuple([tf.assign_add(v, 1.0), tf.constant(1.0)])
    g = tf.group(tf.assign_add(v, 1.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(t) == [2.0, 1.0]
        assert sess.run(g) is None
        assert sess.run(v) == 3.0


def test_multithreaded_executor_reads_references(var_and_pred):
    v, p = var_and_pred
    outs = [tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(v, 10.0)) for _ in range(4)]
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        sess.run(v.initializer)
        got = sess.run(outs, {p: False})
        assert all(isinstance(g, np.float32) and g in (11.0, 21.0, 31.0, 41.0) for g in got)
        assert sess.run(v) == 41.0


def test_uninitialized_reference_in_cond_raises(var_and_pred):
    v, p = var_and_pred
    w = tf.Variable(2.0, name="never_initialized")
    out = tf.cond(p, lambda: tf.assign_add(v, 1.0), lambda: tf.assign_add(w, 1.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
            sess.run(out, {p: False})


def test_ref_merge_static_shape_matches_value():
    v = tf.Variable(np.zeros((2, 3), np.float32))
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.assign_add(v, np.ones((2, 3), np.float32)), lambda: tf.assign(v, v * 2.0))
    assert out.op.type == "RefMerge" and out.shape.as_list() == [2, 3]
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(out, {p: True})
        assert got.shape == (2, 3) and got.dtype == np.float32
        np.testing.assert_array_equal(sess.run(out * 1.0, {p: False}), np.full((2, 3), 2.0, np.float32))
