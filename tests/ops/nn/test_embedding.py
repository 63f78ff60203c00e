"""DynamicPartition / DynamicStitch, embedding_lookup (one table and sharded, "mod" and "div"),
and sparse training through it: an optimizer step touches only the looked-up rows."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops.array import partition_stitch as data_flow_ops
from tensorweave.ops.nn import embedding as embedding_ops
from tensorweave.testing.op_test import check_op, evaluate


# ---------------------------------------------------------------------------------------------
# DynamicPartition
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num", [3, 12])   # few partitions (masks) and many (stable sort)
def test_dynamic_partition_matches_numpy(num):
    rng = np.random.RandomState(num)
    data = rng.uniform(size=(20, 3)).astype(np.float32)
    parts = rng.randint(0, num, 20).astype(np.int32)
    outs = data_flow_ops.dynamic_partition(data, parts, num)
    assert len(outs) == num
    values = evaluate(outs)
    for i, (t, v) in enumerate(zip(outs, values)):
        assert t.shape.as_list() == [None, 3]
        np.testing.assert_array_equal(v, data[parts == i])
        assert v.dtype == np.float32


def test_dynamic_partition_multi_dim_partitions_and_strings():
    data = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    outs = data_flow_ops.dynamic_partition(data, [[0, 1, 1], [1, 0, 2]], 3)
    check_op(outs[0], np.array([[0, 1], [8, 9]], np.float32))
    check_op(outs[1], np.array([[2, 3], [4, 5], [6, 7]], np.float32))
    check_op(outs[2], np.array([[10, 11]], np.float32))
    words = data_flow_ops.dynamic_partition(tf.constant([b"a", b"b", b"c"]), [1, 0, 1], 2)
    assert [list(v) for v in evaluate(words)] == [[b"b"], [b"a", b"c"]]
    empty = data_flow_ops.dynamic_partition(np.zeros([0, 2], np.int64), np.zeros([0], np.int32), 2)
    check_op(empty[1], np.zeros([0, 2], np.int64))


def test_dynamic_partition_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        data_flow_ops.dynamic_partition(tf.zeros([5, 3]), tf.zeros([5, 2], tf.int32), 2)
    with pytest.raises(ValueError, match="less than minimum 1"):
        data_flow_ops.dynamic_partition(tf.zeros([5]), tf.zeros([5], tf.int32), 0)
    with pytest.raises(TypeError):
        data_flow_ops.dynamic_partition(tf.zeros([2]), [0.0, 1.0], 2)
    data, parts = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    outs = data_flow_ops.dynamic_partition(data, parts, 2)
    assert outs[0].shape.ndims is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1\] = 2 is not in \[0, 2\)"):
        evaluate(outs, {data: [1.0, 2.0], parts: [0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1\] = -1 is not in \[0, 2\)"):
        evaluate(outs, {data: [1.0, 2.0], parts: [0, -1]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="data.shape must start with partitions.shape"):
        evaluate(outs, {data: [1.0, 2.0], parts: [0]})


# ---------------------------------------------------------------------------------------------
# DynamicStitch, ParallelDynamicStitch
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stitch", [data_flow_ops.dynamic_stitch, data_flow_ops.parallel_dynamic_stitch])
def test_dynamic_stitch_inverts_dynamic_partition(stitch):
    rng = np.random.RandomState(3)
    data = rng.uniform(size=(9, 2)).astype(np.float32)
    parts = rng.randint(0, 3, 9).astype(np.int32)
    pieces = data_flow_ops.dynamic_partition(data, parts, 3)
    positions = data_flow_ops.dynamic_partition(np.arange(9, dtype=np.int32), parts, 3)
    merged = stitch(positions, pieces)
    assert merged.shape.as_list() == [None, 2]
    check_op(merged, data)


def test_dynamic_stitch_later_indices_win_and_gaps_are_zero():
    check_op(data_flow_ops.dynamic_stitch([[1, 1, 0], [1]], [[1.0, 2.0, 3.0], [4.0]]),
             np.array([3.0, 4.0], np.float32))
    check_op(data_flow_ops.dynamic_stitch([[0, 2], [2]], [[1, 2], [5]]), np.array([1, 0, 5], np.int32))
    merged = data_flow_ops.dynamic_stitch([[0], [3]], [tf.constant([b"a"]), tf.constant([b"b"])])
    assert list(evaluate(merged)) == [b"a", b"", b"", b"b"]
    # indices of rank 2: data rows are data[i][j, k, ...]
    merged = data_flow_ops.dynamic_stitch([[[0, 1]], [2]], [[[[1.0, 1.0], [2.0, 2.0]]], [[3.0, 3.0]]])
    assert merged.shape.as_list() == [3, 2]
    check_op(merged, np.array([[1, 1], [2, 2], [3, 3]], np.float32))


def test_dynamic_stitch_static_shapes():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [1, None])
    assert data_flow_ops.dynamic_stitch([[0, 1], [2]], [a, b]).shape.as_list() == [3, 3]
    assert data_flow_ops.dynamic_stitch([[0, 5], [2]], [tf.placeholder(tf.float32), b]).shape.as_list() == [6, None]
    ids = tf.placeholder(tf.int32, [None])
    assert data_flow_ops.dynamic_stitch([ids, [2]], [tf.placeholder(tf.float32, [None, 3]), b]).shape.as_list() \
        == [None, 3]
    empty = data_flow_ops.dynamic_stitch([np.zeros([0], np.int32)], [tf.zeros([0, 2])])
    check_op(empty, np.zeros([0, 2], np.float32))


def test_dynamic_stitch_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 1"):
        data_flow_ops.dynamic_stitch([[0, 1]], [[1.0]])
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 0 and 1"):
        data_flow_ops.dynamic_stitch([[0, 1], [2]], [[1.0, 2.0], [[3.0]]])
    with pytest.raises(TypeError, match="don't all match"):
        data_flow_ops.dynamic_stitch([[0, 1], [2]], [[1.0, 2.0], [3]])
    with pytest.raises(ValueError, match="must match length"):
        data_flow_ops.dynamic_stitch([[0, 1], [2]], [[1.0, 2.0]])
    idx, data = tf.placeholder(tf.int32), tf.placeholder(tf.float32)
    merged = data_flow_ops.dynamic_stitch([idx], [data])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] is out of range"):
        evaluate(merged, {idx: [0, -1], data: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"data\[0\].shape = \[2\] does not start with indices\[0\].shape = \[1\]"):
        evaluate(merged, {idx: [0], data: [1.0, 2.0]})


# ---------------------------------------------------------------------------------------------
# embedding_lookup
# ---------------------------------------------------------------------------------------------
TABLE = np.arange(40, dtype=np.float32).reshape(10, 4)


@pytest.mark.parametrize("ids", [[3, 0, 3, 9], [[1, 2], [2, 8]], 4, np.zeros([0], np.int64)])
def test_embedding_lookup_single_table(ids):
    out = embedding_ops.embedding_lookup(tf.constant(TABLE), ids)
    check_op(out, TABLE[np.asarray(ids)])


def test_embedding_lookup_on_a_variable_colocates_the_gather():
    table = tf.Variable(TABLE, name="table")
    out = embedding_ops.embedding_lookup(table, [2, 5], name="emb")
    gather = out.op.inputs[0].op
    assert (out.op.type, gather.type, gather.name) == ("Identity", "GatherV2", "emb")
    assert gather.colocation_groups() == [b"loc:@table"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(out), TABLE[[2, 5]])


def _shards(table, sizes):
    bounds = np.cumsum([0] + list(sizes))
    return [table[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _mod_shards(table, n):
    return [table[p::n] for p in range(n)]


def _div_shards(table, n):
    """TF's "div" layout: contiguous blocks, the first (rows % n) one row larger."""
    per, extras = divmod(len(table), n)
    return _shards(table, [per + 1] * extras + [per] * (n - extras))


@pytest.mark.parametrize("rows,n", [(10, 3), (11, 3), (7, 2), (5, 5), (10, 4)])
@pytest.mark.parametrize("ids_shape", [(12,), (4, 3)])
def test_sharded_lookup_equals_unsharded(rows, n, ids_shape):
    table = np.random.RandomState(rows).uniform(size=(rows, 3)).astype(np.float32)
    ids = np.random.RandomState(n).randint(0, rows, ids_shape).astype(np.int32)
    want = table[ids]
    for strategy, shards in (("mod", _mod_shards(table, n)), ("div", _div_shards(table, n))):
        out = embedding_ops.embedding_lookup([tf.constant(s) for s in shards], ids,
                                             partition_strategy=strategy)
        assert out.shape.as_list() == list(ids_shape) + [3]
        check_op(out, want)


def test_sharded_lookup_with_unknown_shapes_and_int64_ids():
    ids = tf.placeholder(tf.int64, [None, 2])
    shard_phs = [tf.placeholder(tf.float32, [None, 4]) for _ in range(3)]
    for strategy, parts in (("mod", _mod_shards(TABLE, 3)), ("div", _div_shards(TABLE, 3))):
        out = embedding_ops.embedding_lookup(shard_phs, ids, partition_strategy=strategy)
        assert out.shape.as_list() == [None, 2, 4]
        feed = dict(zip(shard_phs, parts))
        feed[ids] = [[9, 0], [5, 5], [1, 7]]
        np.testing.assert_array_equal(evaluate(out, feed), TABLE[[[9, 0], [5, 5], [1, 7]]])


def test_sharded_lookup_uses_partition_gather_per_shard_and_stitch():
    shards = [tf.Variable(s, name=f"shard{i}") for i, s in enumerate(_mod_shards(TABLE, 3))]
    out = embedding_ops.embedding_lookup(shards, [1, 2, 3])
    graph = tf.get_default_graph()
    gathers = [op for op in graph.get_operations() if op.type == "GatherV2"]
    assert sorted(g.colocation_groups()[0] for g in gathers) == [b"loc:@shard0", b"loc:@shard1", b"loc:@shard2"]
    assert out.op.type == "ParallelDynamicStitch"
    assert sum(op.type == "DynamicPartition" for op in graph.get_operations()) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(out), TABLE[[1, 2, 3]])


def test_embedding_lookup_max_norm():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], np.float32)
    out = embedding_ops.embedding_lookup(tf.constant(table), [[0, 1], [2, 0]], max_norm=1.0)
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    clipped = table / np.maximum(norms, 1.0)
    check_op(out, clipped[[[0, 1], [2, 0]]], rtol=1e-6)
    sharded = embedding_ops.embedding_lookup([tf.constant(table[:2]), tf.constant(table[2:])], [2, 1],
                                             partition_strategy="div", max_norm=1.0)
    check_op(sharded, clipped[[2, 1]], rtol=1e-6)


def test_embedding_lookup_errors():
    ids = tf.placeholder(tf.int32, [None])
    single = embedding_ops.embedding_lookup(tf.constant(TABLE), ids)
    sharded = embedding_ops.embedding_lookup([tf.constant(s) for s in _mod_shards(TABLE, 2)], ids)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 10 is not in \[0, 10\)"):
        evaluate(single, {ids: [0, 10]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
        evaluate(sharded, {ids: [0, 10]})       # id 10 -> row 5 of a 5-row shard
    with pytest.raises(tf.errors.InvalidArgumentError):
        evaluate(single, {ids: [-1]})
    with pytest.raises(ValueError, match="Need at least one param"):
        embedding_ops.embedding_lookup([], [0])
    with pytest.raises(ValueError, match="Unrecognized partition strategy: bad"):
        embedding_ops.embedding_lookup([tf.constant(TABLE)] * 2, [0], partition_strategy="bad")
    with pytest.raises(TypeError):
        embedding_ops.embedding_lookup(tf.constant(TABLE), [0.5])


# ---------------------------------------------------------------------------------------------
# Sparse training through embedding_lookup
# ---------------------------------------------------------------------------------------------
ROWS, DIM, LR = 1000, 8, 0.1
IDS = [3, 7, 3]


def _sparse_step(optimizer, shards=1):
    """One optimizer step on embedding_lookup(table, [3, 7, 3]) with d(loss)/d(rows) = G; returns
    (table before, table after, G)."""
    rng = np.random.RandomState(0)
    init = rng.uniform(-1, 1, (ROWS, DIM)).astype(np.float32)
    g = rng.uniform(-1, 1, (len(IDS), DIM)).astype(np.float32)
    if shards == 1:
        params = tables = [tf.Variable(init)]
        params = params[0]
    else:
        tables = [tf.Variable(s) for s in _div_shards(init, shards)]
        params = tables
    rows = embedding_ops.embedding_lookup(params, IDS, partition_strategy="div")
    grads = optimizer.compute_gradients(rows, var_list=tables, grad_loss=tf.constant(g))
    assert all(isinstance(gr, IndexedSlices) for gr, _ in grads)
    train = optimizer.apply_gradients(grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        after = np.concatenate(sess.run([t.value() for t in tables]))
    return init, after, g


def _assert_only_rows_3_and_7_changed(before, after):
    untouched = np.ones(ROWS, bool)
    untouched[[3, 7]] = False
    assert np.array_equal(after[untouched], before[untouched])  # bit-identical
    assert not np.array_equal(after[3], before[3]) and not np.array_equal(after[7], before[7])


@pytest.mark.parametrize("shards", [1, 3])
def test_gradient_descent_updates_only_looked_up_rows(shards):
    before, after, g = _sparse_step(tf.train.GradientDescentOptimizer(LR), shards)
    _assert_only_rows_3_and_7_changed(before, after)
    np.testing.assert_allclose(after[3], before[3] - LR * (g[0] + g[2]), rtol=1e-6, atol=1e-7)  # id 3 twice
    np.testing.assert_allclose(after[7], before[7] - LR * g[1], rtol=1e-6, atol=1e-7)
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert "ScatterSub" in ops and "ApplyGradientDescent" not in ops


@pytest.mark.parametrize("shards", [1, 3])
def test_adagrad_updates_only_looked_up_rows(shards):
    before, after, g = _sparse_step(tf.train.AdagradOptimizer(LR, initial_accumulator_value=0.1), shards)
    _assert_only_rows_3_and_7_changed(before, after)
    for row, grad in ((3, g[0] + g[2]), (7, g[1])):
        accum = 0.1 + grad * grad
        np.testing.assert_allclose(after[row], before[row] - LR * grad / np.sqrt(accum), rtol=1e-5, atol=1e-6)
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"Unique", "SparseApplyAdagrad"} <= ops and "ApplyAdagrad" not in ops


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse_matches_numpy(combiner, weighted):
    table = np.arange(24, dtype=np.float32).reshape(6, 4) / 10
    indices, ids, weights = [[0, 0], [0, 1], [2, 0], [2, 2]], [3, 1, 3, 5], [0.5, 2.0, 1.0, 3.0]
    sp_ids = tf.SparseTensor(indices, tf.constant(ids, tf.int64), [4, 3])
    sp_weights = tf.SparseTensor(indices, weights, [4, 3]) if weighted else None
    params = tf.Variable(table)
    out = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=combiner)
    grad = tf.gradients(tf.reduce_sum(out), params)[0]
    w = np.array(weights if weighted else [1.0] * 4, np.float32)
    expected = np.zeros((3, 4), np.float32)  # rows up to the last one present; row 1 is empty
    for row in (0, 2):
        sel = [k for k, (r, _) in enumerate(indices) if r == row]
        total = sum(w[k] * table[ids[k]] for k in sel)
        norm = {"sum": 1.0, "mean": w[sel].sum(), "sqrtn": np.sqrt((w[sel] ** 2).sum())}[combiner]
        expected[row] = total / norm
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, g = sess.run([out, grad])
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert out.shape.as_list() == [None, 4]
    assert isinstance(grad, tf.IndexedSlices) and sorted(g.indices.tolist()) == [1, 3, 5]


def test_embedding_lookup_sparse_rejects_unknown_combiner():
    sp_ids = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    with pytest.raises(ValueError, match="combiner"):
        tf.nn.embedding_lookup_sparse(tf.zeros([3, 2]), sp_ids, None, combiner="max")
