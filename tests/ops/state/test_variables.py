import numpy as np
import pytest

import tensorweave as tf


def test_variable_nodes_and_names():
    v = tf.Variable([1.0, 2.0], name="weights")
    assert v.name == "weights:0"
    assert v.op.type == "VariableV2"
    assert v.initializer.name == "weights/Assign"
    assert v.value().name == "weights/read:0"
    assert v.dtype.base_dtype == tf.float32 and v.dtype.is_ref_dtype
    assert v.shape.as_list() == [2]
    assert v in tf.global_variables() and v in tf.trainable_variables()
    frozen = tf.Variable(1, trainable=False)
    assert frozen not in tf.trainable_variables()


def test_uninitialized_read_raises_failed_precondition_naming_variable():
    v = tf.Variable(3.0, name="my_var")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="my_var"):
            sess.run(v)
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v + 1.0)


def test_assign_family():
    v = tf.Variable(10.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(v.assign(4.0)) == 4.0
        assert sess.run(v.assign_add(2.0)) == 6.0
        assert sess.run(v.assign_sub(1.0)) == 5.0
        assert sess.run(tf.assign(v, 1.0)) == 1.0
        assert sess.run(tf.assign_add(v, 1.0, use_locking=True)) == 2.0
        assert sess.run(tf.assign_sub(v, 3.0)) == -1.0
        assert sess.run(v.read_value()) == -1.0


def test_assign_shape_validation():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        tf.assign(v, [1.0, 2.0, 3.0])
    p = tf.placeholder(tf.float32)
    a = tf.assign(v, p)
    free = tf.assign(v, p, validate_shape=False)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Assign requires shapes"):
            sess.run(a, {p: [1.0, 2.0, 3.0]})
        np.testing.assert_array_equal(sess.run(free, {p: [7.0, 8.0, 9.0]}), [7, 8, 9])


def test_variables_live_per_session():
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        s1.run(inc)
        with pytest.raises(tf.errors.FailedPreconditionError):
            s2.run(v)
        s2.run(v.initializer)
        assert s1.run(v) == 2.0 and s2.run(v) == 1.0


def test_initializers_and_reports():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    loc = tf.Variable(3.0, name="loc", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    with tf.Session() as sess:
        assert sorted(sess.run(tf.report_uninitialized_variables())) == [b"a", b"b", b"loc"]
        sess.run(tf.variables_initializer([a]))
        assert sess.run(tf.is_variable_initialized(a)) and not sess.run(tf.is_variable_initialized(b))
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"b", b"loc"]
        sess.run(tf.local_variables_initializer())
        assert list(sess.run(tf.report_uninitialized_variables())) == [b"b"]
        sess.run(tf.initialize_all_variables())
        assert sess.run(tf.report_uninitialized_variables()).size == 0
        assert sess.run(loc) == 3.0


def test_variable_arithmetic_and_conversion():
    v = tf.Variable([[1.0, 2.0]])
    w = tf.Variable(tf.ones([2, 1]))
    y = tf.matmul(v, w) + v[0, 1] * 2.0 - (-v)[0, 0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(y)[0, 0] == 3.0 + 4.0 + 1.0


def test_variable_from_callable_and_dependent_init():
    v = tf.Variable(lambda: tf.zeros([3]), name="z")
    assert v.initial_value.op.name.startswith("z/Initializer/")
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v), [0, 0, 0])


def test_get_variable_reuse_rules():
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(0.5))
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("w", [2, 3])
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w", [2, 3]) is w
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("other", [1])
        with pytest.raises(ValueError):
            tf.get_variable("w", [3, 3])
    with tf.variable_scope("layer") as scope:
        scope.reuse_variables()
        assert tf.get_variable("w") is w
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a1 = tf.get_variable("a", [1])
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a2 = tf.get_variable("a", [1])
    assert a1 is a2
    assert w.name == "layer/w:0"
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(w), np.full((2, 3), 0.5, np.float32))


def test_variable_scope_names_and_defaults():
    with tf.variable_scope("outer", initializer=tf.ones_initializer()):
        with tf.variable_scope(None, default_name="block"):
            a = tf.get_variable("a", [2])
        with tf.variable_scope(None, default_name="block"):
            b = tf.get_variable("b", [2])
            c = tf.identity(b)
    assert a.name == "outer/block/a:0" and b.name == "outer/block_1/b:0"
    assert c.op.name == "outer/block_1/Identity"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(a), [1.0, 1.0])


@pytest.mark.parametrize("init, check", [
    (tf.zeros_initializer(), lambda x: np.all(x == 0)),
    (tf.ones_initializer(), lambda x: np.all(x == 1)),
    (tf.constant_initializer(7.0), lambda x: np.all(x == 7)),
    (tf.random_uniform_initializer(-0.1, 0.1, seed=1), lambda x: np.all(np.abs(x) <= 0.1) and x.std() > 0),
    (tf.random_normal_initializer(0.0, 1.0, seed=1), lambda x: 0.8 < x.std() < 1.2),
    (tf.truncated_normal_initializer(0.0, 1.0, seed=1), lambda x: np.all(np.abs(x) <= 2.0)),
    (tf.glorot_uniform_initializer(seed=1), lambda x: np.all(np.abs(x) <= np.sqrt(6.0 / 600))),
])
def test_initializers(init, check):
    v = tf.get_variable("v", [300, 300], initializer=init)
    with tf.Session() as sess:
        sess.run(v.initializer)
        value = sess.run(v)
    assert value.shape == (300, 300) and value.dtype == np.float32
    assert check(value)


def test_default_get_variable_initializer_is_glorot_uniform():
    v = tf.get_variable("v", [100, 50])
    i = tf.get_variable("i", [3], dtype=tf.int32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        limit = np.sqrt(6.0 / 150)
        value = sess.run(v)
        assert np.all(np.abs(value) <= limit) and value.std() > limit / 3
        np.testing.assert_array_equal(sess.run(i), [0, 0, 0])


def test_initialized_value_initializes_one_variable_from_another():
    v = tf.Variable(2.0, name="v")
    w = tf.Variable(v.initialized_value() * 3.0, name="w")
    inc = tf.assign_add(v, 1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())   # in any order: w sees v's initial value
        assert sess.run(w) == 6.0
        sess.run(inc)                                 # once v is set, its current value is used
        assert sess.run(v.initialized_value()) == 3.0
        assert sess.run(v) == 3.0                     # reading it did not re-initialize v
    with tf.Session() as sess:
        assert sess.run(v.initialized_value()) == 2.0  # uninitialized: the initial value
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)


def test_constant_initializer_fills_as_tf1_constant():
    # TF1: fewer values than the shape holds repeat the last one (verified with TF 2.21).
    a = tf.get_variable("a", [3], initializer=tf.constant_initializer([1.0, 2.0]))
    b = tf.get_variable("b", [2, 2], initializer=tf.constant_initializer([1, 2, 3, 4]))
    c = tf.get_variable("c", [2], dtype=tf.int32, initializer=tf.constant_initializer(5))
    with pytest.raises(ValueError, match="Too many elements"):
        tf.get_variable("d", [2], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        tf.get_variable("e", [3], initializer=tf.constant_initializer([1.0, 2.0], verify_shape=True))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([a, b, c])
    np.testing.assert_array_equal(got[0], np.float32([1, 2, 2]))
    np.testing.assert_array_equal(got[1], np.float32([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(got[2], np.int32([5, 5]))


SCATTERS = [
    (tf.scatter_update, None),
    (tf.scatter_add, np.add),
    (tf.scatter_sub, np.subtract),
    (tf.scatter_mul, np.multiply),
    (tf.scatter_div, np.divide),
]


# scatter_update with repeated indices has no defined winner in TF: only distinct ones for it.
SCATTER_CASES = [(fn, ufunc, indices) for fn, ufunc in SCATTERS
                 for indices in ([4, 0, 2], [[1, 2], [3, 0]], [2, 2, 2, 0], [[1, 3], [3, 1]])
                 if ufunc is not None or len(np.unique(indices)) == np.size(indices)]


@pytest.mark.parametrize("fn,ufunc,indices", SCATTER_CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in SCATTER_CASES])
def test_scatter_ops_match_numpy(fn, ufunc, indices):
    rng = np.random.RandomState(0)
    init = rng.uniform(1, 2, (5, 4)).astype(np.float32)
    idx = np.asarray(indices, np.int32)
    updates = rng.uniform(1, 2, idx.shape + (4,)).astype(np.float32)
    v = tf.Variable(init)
    out = fn(v, idx, updates)
    assert out.shape.as_list() == [5, 4]
    expected = init.copy()
    if ufunc is None:
        expected[idx] = updates
    else:
        ufunc.at(expected, idx, updates)   # repeated indices combine one after another
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(out), expected)
        np.testing.assert_array_equal(sess.run(v), expected)


def test_scatter_on_vectors_int64_indices_and_errors():
    v = tf.Variable([1.0, 2.0, 3.0])
    add = tf.scatter_add(v, tf.constant([2, 2], tf.int64), [10.0, 20.0])
    i = tf.placeholder(tf.int32, [None])
    bad = tf.scatter_sub(v, i, [1.0])
    with pytest.raises(ValueError):
        tf.scatter_add(v, [0, 1], [1.0, 2.0, 3.0])        # updates don't match indices
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(add), [1, 2, 33])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not in \[0, 3\)"):
            sess.run(bad, {i: [3]})
        np.testing.assert_array_equal(sess.run(v), [1, 2, 33])   # a failed scatter changes nothing
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(add)


def test_static_shapes_of_state_ops_match_their_values():
    from tensorweave.testing.op_test import assert_static_shape_matches
    v = tf.Variable(np.ones((3, 2), np.float32))
    p = tf.placeholder(tf.float32, [None, 2])
    free = tf.Variable(p, validate_shape=False)
    outputs = [v._ref(), tf.assign(v, np.zeros((3, 2), np.float32)), tf.assign_add(v, np.ones((3, 2))),
               tf.assign_sub(v, np.ones((3, 2))), tf.scatter_update(v, [0], [[5.0, 5.0]]),
               tf.scatter_add(v, [1, 1], [[1.0, 1.0], [1.0, 1.0]]), tf.scatter_sub(v, [2], [[1.0, 1.0]]),
               tf.scatter_mul(v, [0], [[2.0, 2.0]]), tf.scatter_div(v, [0], [[2.0, 2.0]]),
               tf.is_variable_initialized(v), tf.assign(free, [[1.0, 2.0]] * 4, validate_shape=False)]
    assert free.shape.ndims is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer(), {p: np.zeros((2, 2))})
        for out in outputs:
            value = sess.run(out)
            assert_static_shape_matches(out, value)
            if out.dtype.base_dtype == tf.float32:
                assert out.shape.as_list() == list(np.shape(value)) or out.op.inputs[0] is free._ref()
