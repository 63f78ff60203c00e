"""tf.cond, tf.case and tf.while_loop, run by the executor's dead values and frames."""
import collections
import time

import numpy as np
import pytest

import tensorweave as tf


def test_cond_picks_branch_and_nested_outputs():
    x = tf.placeholder(tf.float32, [])
    out = tf.cond(x > 0, lambda: {"a": x * 2.0, "b": (x, tf.constant(1))},
                  lambda: {"a": x - 10.0, "b": (-x, tf.constant(2))})
    with tf.Session() as sess:
        pos = sess.run(out, {x: 3.0})
        neg = sess.run(out, {x: -1.0})
    assert pos["a"] == 6.0 and pos["b"] == (3.0, 1)
    assert neg["a"] == -11.0 and neg["b"] == (1.0, 2)


def test_cond_fn1_fn2_and_strict():
    p = tf.placeholder(tf.bool, [])
    single = tf.cond(p, fn1=lambda: [tf.constant(1)], fn2=lambda: [tf.constant(2)])
    strict = tf.cond(p, lambda: [tf.constant(1)], lambda: [tf.constant(2)], strict=True)
    assert isinstance(single, tf.Tensor) and isinstance(strict, list)
    with tf.Session() as sess:
        assert sess.run(single, {p: False}) == 2


def test_untaken_branch_side_effects_do_not_happen():
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])

    def bump():
        with tf.control_dependencies([tf.assign_add(v, 1)]):
            return tf.constant(1)

    out = tf.cond(p, bump, lambda: tf.constant(0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(out, {p: False})
        sess.run(out, {p: False})
        assert sess.run(v) == 0
        sess.run(out, {p: True})
        assert sess.run(v) == 1


def test_cond_returning_outside_tensor_and_op():
    a = tf.constant(5.0)
    p = tf.placeholder(tf.bool, [])
    tf.Variable(1.0)
    out = tf.cond(p, lambda: a, lambda: a * 2.0)
    with tf.Session() as sess:
        assert sess.run(out, {p: True}) == 5.0 and sess.run(out, {p: False}) == 10.0


def test_cond_errors():
    with pytest.raises(TypeError):
        tf.cond(tf.constant(1), lambda: 1, lambda: 2)
    with pytest.raises(ValueError):
        tf.cond(tf.constant(True), lambda: (tf.constant(1), tf.constant(2)), lambda: tf.constant(1))
    with pytest.raises(TypeError):
        tf.cond(tf.constant(True), 1, lambda: 2)


def test_case():
    x = tf.placeholder(tf.int32, [])
    out = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))],
                  default=lambda: tf.constant(0))
    exclusive = tf.case({x > 1: lambda: tf.constant(10), x > 2: lambda: tf.constant(20)},
                        default=lambda: tf.constant(0), exclusive=True)
    with tf.Session() as sess:
        assert [sess.run(out, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]
        assert sess.run(exclusive, {x: 2}) == 10
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(exclusive, {x: 3})


def test_while_loop_data_dependent_count():
    n = tf.placeholder(tf.int32, [])
    i, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [tf.constant(0), tf.constant(0)])
    with tf.Session() as sess:
        assert sess.run([i, total], {n: 10}) == [10, 45]
        assert sess.run([i, total], {n: 0}) == [0, 0]
        assert sess.run([i, total], {n: 1000}) == [1000, 499500]


def test_while_loop_structures_and_invariants():
    Pair = collections.namedtuple("Pair", ["count", "acc"])
    w = tf.constant(2.0)   # loop invariant captured from outside
    out = tf.while_loop(lambda p: p.count < 3, lambda p: Pair(p.count + 1, p.acc * w),
                        Pair(tf.constant(0), tf.constant([1.0, 1.0])))
    assert isinstance(out, Pair)
    with tf.Session() as sess:
        got = sess.run(out)
    assert isinstance(got, Pair) and got.count == 3
    np.testing.assert_array_equal(got.acc, [8.0, 8.0])


def test_while_loop_shape_invariants():
    x0 = tf.constant([1.0])
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x0])
    grown = tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x0],
                          shape_invariants=[tf.TensorShape([None])])
    with tf.Session() as sess:
        assert sess.run(grown).shape == (8,)


def test_nested_loops():
    def outer_body(i, total):
        inner = tf.while_loop(lambda j, s: j < i, lambda j, s: (j + 1, s + j), [tf.constant(0), tf.constant(0)])
        return i + 1, total + inner[1]
    i, total = tf.while_loop(lambda i, t: i < 6, outer_body, [tf.constant(0), tf.constant(0)])
    expected = sum(sum(range(k)) for k in range(6))
    with tf.Session() as sess:
        assert sess.run(total) == expected


def test_cond_inside_loop_and_loop_inside_untaken_cond():
    def body(i, acc):
        acc = tf.cond(tf.equal(i % 2, 0), lambda: acc + i, lambda: acc - i)
        return i + 1, acc
    _, acc = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(0)])
    p = tf.placeholder(tf.bool, [])
    looped = tf.cond(p, lambda: tf.while_loop(lambda k: k < 4, lambda k: k + 1, [tf.constant(0)]),
                     lambda: tf.constant(-1))
    with tf.Session() as sess:
        assert sess.run(acc) == 0 - 1 + 2 - 3 + 4
        assert sess.run(looped, {p: True}) == 4
        assert sess.run(looped, {p: False}) == -1


def test_stateful_op_in_body_runs_once_per_iteration_and_variable_reads():
    counter = tf.Variable(0)
    scale = tf.Variable(3)

    def body(i):
        with tf.control_dependencies([tf.assign_add(counter, 1)]):
            return i + scale
    out = tf.while_loop(lambda i: i < 30, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out) == 30
        assert sess.run(counter) == 10


def test_maximum_iterations():
    out = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [tf.constant(0)], maximum_iterations=7)
    with tf.Session() as sess:
        assert sess.run(out) == 7


def test_independent_iterations_overlap():
    """With parallel_iterations > 1 an iteration's slow, independent body starts before the
    previous one finished (tagged-token execution)."""
    spans = []

    def slow(i):
        start = time.perf_counter()
        time.sleep(0.05)
        spans.append((start, time.perf_counter()))
        return i

    i0 = tf.constant(0)

    def body2(i, dummy):
        # the slow node hangs off the counter, which advances without waiting for it
        side = tf.py_func(slow, [i], tf.int32, stateful=False)
        return i + 1, side
    loop = tf.while_loop(lambda i, d: i < 4, body2, [i0, tf.constant(0)], parallel_iterations=4)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        sess.run(loop)
    assert len(spans) == 4
    spans.sort()
    overlaps = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1])
    assert overlaps >= 1


def test_tensor_array_ops():
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0]).write(2, [5.0, 6.0])
    assert ta.element_shape.as_list() == [2]
    split = tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 2])
    scattered = tf.TensorArray(tf.int32, size=4).scatter([3, 0], [[7], [8]])
    dynamic = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(4, 1.0)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(ta.stack()), [[1, 2], [3, 4], [5, 6]])
        np.testing.assert_array_equal(sess.run(ta.concat()), [1, 2, 3, 4, 5, 6])
        np.testing.assert_array_equal(sess.run(ta.gather([2, 0])), [[5, 6], [1, 2]])
        assert sess.run(ta.read(1)).tolist() == [3.0, 4.0]
        assert sess.run(ta.size()) == 3
        assert sess.run(split.read(1)).tolist() == [2.0, 3.0]
        assert sess.run(scattered.gather([0, 3])).tolist() == [[8], [7]]
        assert sess.run(dynamic.size()) == 5


def test_tensor_array_errors():
    ta = tf.TensorArray(tf.float32, size=2)
    over = ta.write(2, 1.0)
    twice = ta.write(0, 1.0).write(0, 2.0)
    w = ta.write(0, 1.0)
    read_twice = [w.read(0), w.read(0)]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="not resizeable"):
            sess.run(over.flow)
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been written"):
            sess.run(twice.flow)
        with pytest.raises(tf.errors.InvalidArgumentError, match="twice"):
            sess.run(read_twice)
    with pytest.raises(ValueError):
        tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [1.0, 2.0])


def test_tensor_array_through_while_loop():
    n = tf.placeholder(tf.int32, [])
    ta = tf.TensorArray(tf.int32, size=n)
    _, ta = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a.write(i, i * i)), [tf.constant(0), ta])
    with tf.Session() as sess:
        assert sess.run(ta.stack(), {n: 5}).tolist() == [0, 1, 4, 9, 16]


def test_stack_has_the_static_size_when_size_is_constant():
    ta = tf.TensorArray(tf.float32, size=4)
    _, ta = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a.write(i, tf.ones([2]) * tf.cast(i, tf.float32))),
                          [tf.constant(0), ta])
    assert ta.stack().shape.as_list() == [4, 2]
    dynamic = tf.TensorArray(tf.float32, size=4, dynamic_size=True).write(0, tf.ones([2]))
    assert dynamic.stack().shape.as_list() == [None, 2]
    n = tf.placeholder(tf.int32, [])
    assert tf.TensorArray(tf.float32, size=n).write(0, tf.ones([2])).stack().shape.as_list() == [None, 2]
    assert tf.TensorArray(tf.float32, size=3).stack().shape.ndims is None  # element shape unknown


def test_functional_ops():
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    m = tf.map_fn(lambda v: v * v, x)
    pair = tf.map_fn(lambda ab: (ab[0] + ab[1], ab[0] * ab[1]), (x, x * 2.0))
    to_int = tf.map_fn(lambda v: tf.cast(v, tf.int32) * 2, x, dtype=tf.int32)
    fl = tf.foldl(lambda a, v: a + v, x)
    fr = tf.foldr(lambda a, v: a * 10.0 + v, x, initializer=tf.constant(0.0))
    sc = tf.scan(lambda a, v: a + v, x)
    sc_rev = tf.scan(lambda a, v: a * v, x, initializer=tf.constant(1.0), reverse=True)
    with tf.Session() as sess:
        got = sess.run([m, pair, to_int, fl, fr, sc, sc_rev])
    np.testing.assert_array_equal(got[0], [1, 4, 9, 16])
    np.testing.assert_array_equal(got[1][0], [3, 6, 9, 12])
    np.testing.assert_array_equal(got[1][1], [2, 8, 18, 32])
    assert got[2].dtype == np.int32 and got[2].tolist() == [2, 4, 6, 8]
    assert got[3] == 10.0 and got[4] == 4321.0
    np.testing.assert_array_equal(got[5], [1, 3, 6, 10])
    np.testing.assert_array_equal(got[6], [24, 24, 12, 4])
    pairs = tf.scan(lambda a, v: (a[0] + v, a[1] * v), x, initializer=(tf.constant(0.0), tf.constant(1.0)))
    for out in [m, sc, sc_rev, *pairs]:
        assert out.shape.as_list() == [4]


def test_control_dependencies_from_outside_the_loop():
    """Ops built in a loop under control_dependencies on outside ops wait for them (the edge is
    routed into the frame) and still run exactly once per iteration."""
    counter = tf.Variable(0)
    side = tf.Variable(0)
    bump = tf.assign_add(side, 5)
    with tf.control_dependencies([bump]):
        first = tf.while_loop(lambda i: i < 3, lambda i: i + side.read_value(), [tf.constant(0)])
    marker = tf.group(bump)

    def body(i):
        with tf.control_dependencies([marker]):   # an outside op with no outputs
            inc = tf.assign_add(counter, tf.constant(1))
        with tf.control_dependencies([inc]):
            return i + 1
    second = tf.while_loop(lambda i: i < 4, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(first) == 5 and sess.run(side) == 5
        assert sess.run(second) == 4
        assert sess.run(counter) == 4 and sess.run(side) == 10


def test_ops_reading_only_invariants_run_once_per_iteration():
    """A stateful op whose inputs are all loop invariants (constants, outside tensors) does not
    run again in the final iteration, whose predicate is false."""
    counter = tf.Variable(0.0)
    step = tf.constant(2.0)

    def body(i):
        inc = tf.assign_add(counter, step)
        with tf.control_dependencies([inc]):
            return i + 1
    out = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(out) == 5
        assert sess.run(counter) == 10.0


def test_gradient_of_a_variable_read_inside_cond_branches():
    v = tf.Variable(3.0)
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: v.read_value() * 2.0, lambda: v.read_value() * 5.0)
    g = tf.gradients(r, v)[0]
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([r, g], {p: True}) == [6.0, 2.0]
        assert sess.run([r, g], {p: False}) == [15.0, 5.0]
