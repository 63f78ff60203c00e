"""Layout optimisation: NCHW convolution, bias, pooling and batch-norm chains (and their
gradients) run as NHWC on CPU with transposes only at the chain's ends; numbers unchanged; what
must keep its layout keeps it."""
import numpy as np
import pytest

import tensorweave as tf
from tests.grappler.helpers import ONLY, by_name, off_config, on_config, optimize, types

LAYOUT = ONLY["layout_optimizer"]
RNG = np.random.RandomState(0)


def _cnn(x, pool="max", batch_norm=False):
    w1 = tf.constant(RNG.randn(3, 3, 2, 4).astype(np.float32) * 0.3)
    b1 = tf.constant(RNG.randn(4).astype(np.float32))
    w2 = tf.constant(RNG.randn(3, 3, 4, 3).astype(np.float32) * 0.3)
    h = tf.nn.conv2d(x, w1, [1, 1, 1, 1], "SAME", data_format="NCHW")
    h = tf.nn.relu(tf.nn.bias_add(h, b1, data_format="NCHW"))
    pooling = tf.nn.max_pool if pool == "max" else tf.nn.avg_pool
    h = pooling(h, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    if batch_norm:
        h, _, _ = tf.nn.fused_batch_norm(h, tf.ones([4]) * 1.5, tf.zeros([4]) + 0.1, data_format="NCHW")
    h = tf.nn.conv2d(h * 2.0, w2, [1, 1, 2, 2], "SAME", data_format="NCHW")
    return h, [w1, b1, w2]


def _values(fetches, feed_dict, config):
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("pool", ["max", "avg"])
@pytest.mark.parametrize("batch_norm", [False, True])
def test_chain_runs_nhwc_with_transposes_at_its_ends(pool, batch_norm):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        out, _ = _cnn(x, pool, batch_norm)
        loss = tf.reduce_sum(out * out)
        ops, _ = optimize([loss], [x], settings=LAYOUT)
        for op in ops:
            if op.type in ("Conv2D", "BiasAdd", "MaxPool", "AvgPool", "FusedBatchNormV3", "FusedBatchNorm"):
                assert op.get_attr("data_format") in ("NHWC", b"NHWC"), op.name
        transposes = [op for op in ops if op.type == "Transpose"]
        assert len(transposes) == 2  # the input in, the last convolution's output out
        assert by_name(ops)[out.op.name].outputs[0].shape.as_list() == [2, 2, 2, 3]  # NHWC now
        xv = RNG.randn(2, 2, 8, 8).astype(np.float32)
        expected = _values(loss, {x: xv}, off_config())
        np.testing.assert_allclose(_values(loss, {x: xv}, on_config()), expected, rtol=1e-5)


def test_gradient_chain_rewritten_and_numbers_equal():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        out, weights = _cnn(x, "max", batch_norm=True)
        loss = tf.reduce_mean(tf.square(out))
        grads = tf.gradients(loss, weights + [x])
        # what a training step does with them: nothing fetches the gradient nodes themselves
        sums = [tf.reduce_sum(g * g) for g in grads]
        ops, _ = optimize(sums, [x], settings=LAYOUT)
        nchw = [op.name for op in ops if op.type != "Transpose" and "data_format" in op.node_def.attr
                and op.get_attr("data_format") in ("NCHW", b"NCHW")]
        assert nchw == []
        assert {"Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad", "BiasAddGrad"} <= set(types(ops))
        xv = RNG.randn(2, 2, 8, 8).astype(np.float32)
        expected = _values(sums, {x: xv}, off_config())
        for got, want in zip(_values(sums, {x: xv}, on_config()), expected):
            np.testing.assert_allclose(got, want, rtol=1e-5)


def test_user_transposes_cancel():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 2])          # NHWC data made NCHW by hand
        nchw = tf.transpose(x, [0, 3, 1, 2])
        w = tf.constant(RNG.randn(3, 3, 2, 4).astype(np.float32))
        out = tf.transpose(tf.nn.conv2d(nchw, w, [1, 1, 1, 1], "SAME", data_format="NCHW"), [0, 2, 3, 1])
        loss = tf.reduce_sum(out)
        ops, _ = optimize([loss], [x], settings=LAYOUT)
        conv = next(op for op in ops if op.type == "Conv2D")
        assert conv.inputs[0] is x  # the user's transpose and the inserted one cancelled
        xv = RNG.randn(2, 8, 8, 2).astype(np.float32)
        np.testing.assert_allclose(_values(loss, {x: xv}, on_config()), _values(loss, {x: xv}, off_config()),
                                   rtol=1e-5)


def test_fetched_nodes_and_other_devices_keep_their_layout():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        w = tf.constant(RNG.randn(3, 3, 2, 4).astype(np.float32))
        conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW")
        ops, _ = optimize([conv], [x], settings=LAYOUT)   # fetched: keeps NCHW
        assert "Transpose" not in types(ops) and by_name(ops)[conv.op.name].get_attr("data_format") in (
            "NCHW", b"NCHW")
        with tf.device("/device:GPU:0"):
            gpu = tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW"))
        ops, _ = optimize([gpu], [x], settings=LAYOUT)    # requested on a GPU: left for it
        assert "Transpose" not in types(ops)


def test_nhwc_graphs_and_unknown_ranks_untouched():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 8, 8, 2])
        w = tf.constant(RNG.randn(3, 3, 2, 4).astype(np.float32))
        out = tf.reduce_sum(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")))
        ops, fetches = optimize([out], [x], settings=LAYOUT)
        assert fetches[0] is out
        y = tf.placeholder(tf.float32, None)
        out = tf.reduce_sum(tf.nn.max_pool(y, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW"))
        ops, fetches = optimize([out], [y], settings=LAYOUT)
        assert fetches[0] is out


def test_nchw_chain_fuses_after_the_rewrite():
    """With the remapper after it, an NCHW Conv2D+BiasAdd+Relu becomes one NHWC _FusedConv2D."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        w = tf.constant(RNG.randn(3, 3, 2, 4).astype(np.float32))
        b = tf.constant(RNG.randn(4).astype(np.float32))
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW"), b,
                                      data_format="NCHW"))
        loss = tf.reduce_sum(h * h)
        settings = ONLY["layout_optimizer"].__class__(**{**ONLY["layout_optimizer"].__dict__, "remapping": True})
        ops, _ = optimize([loss], [x], settings=settings)
        assert "_FusedConv2D" in types(ops) and "Conv2D" not in types(ops)
        xv = RNG.randn(2, 2, 8, 8).astype(np.float32)
        np.testing.assert_allclose(_values(loss, {x: xv}, on_config()), _values(loss, {x: xv}, off_config()),
                                   rtol=1e-5)


def test_off_switch():
    config = on_config()
    config.graph_options.rewrite_options.layout_optimizer = config.graph_options.rewrite_options.OFF
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        out, _ = _cnn(x)
        loss = tf.reduce_sum(out)
        meta = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(loss, {x: np.ones((2, 2, 8, 8), np.float32)},
                     options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
        ops = [n for g in meta.partition_graphs for n in g.node]
        assert not any(n.op == "Transpose" for n in ops)
        assert all(n.attr["data_format"].s == b"NCHW" for n in ops if n.op in ("Conv2D", "MaxPool"))


def test_nodes_in_loops_left_alone():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 2, 8, 8])
        w = tf.constant(RNG.randn(3, 3, 2, 2).astype(np.float32) * 0.2)

        def body(i, h):
            return i + 1, tf.nn.relu(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME", data_format="NCHW"))
        out = tf.reduce_sum(tf.while_loop(lambda i, h: i < 2, body, [tf.constant(0), x])[1])
        ops, _ = optimize([out], [x], settings=LAYOUT)
        assert "Transpose" not in types(ops)
        xv = RNG.randn(2, 2, 8, 8).astype(np.float32)
        np.testing.assert_allclose(_values(out, {x: xv}, on_config()), _values(out, {x: xv}, off_config()),
                                   rtol=1e-5)
