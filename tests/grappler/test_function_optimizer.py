"""The function optimizer's switch: whether a plan inlines its function calls (the inlining
itself is runtime/inlining.py's, tested in tests/runtime/test_function_inlining.py)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.grappler.function_optimizer import inlines_calls
from tensorweave.python.framework.function import Defun
from tests.grappler.helpers import GrapplerEnv


def _config(function_optimization=None, disable_meta=False, classic_inlining=False):
    config = tf.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    if function_optimization is not None:
        rewrite.function_optimization = function_optimization
    rewrite.disable_meta_optimizer = disable_meta
    config.graph_options.optimizer_options.do_function_inlining = classic_inlining
    return config


def test_decision_follows_the_rewriter_config():
    on, off = tf.ConfigProto().graph_options.rewrite_options.ON, tf.ConfigProto().graph_options.rewrite_options.OFF
    assert inlines_calls(_config())
    assert inlines_calls(_config(on))
    assert not inlines_calls(_config(off))
    assert not inlines_calls(_config(disable_meta=True))
    assert inlines_calls(_config(off, classic_inlining=True))  # TF's classic optimizer inlines too
    with GrapplerEnv("off"):  # the graph passes off; inlining as configured
        assert inlines_calls(_config()) and not inlines_calls(_config(off))
    with GrapplerEnv("aggressive"):
        assert inlines_calls(_config(off))


@pytest.mark.parametrize("disable_meta", [False, True])
def test_calls_inlined_only_when_on_with_the_same_numbers(disable_meta):
    with tf.Graph().as_default():
        @Defun(tf.float32)
        def f(x):
            return tf.tanh(x) * 2.0

        a = tf.placeholder(tf.float32, [3])
        y = f(a)
        feed = {a: np.array([0.1, -1.0, 2.0], np.float32)}
        results = {}
        for name, config in (("on", _config()), ("off", _config(disable_meta=disable_meta,
                                                                 function_optimization=None if disable_meta
                                                                 else tf.ConfigProto().graph_options
                                                                 .rewrite_options.OFF))):
            meta = tf.RunMetadata()
            with tf.Session(config=config) as sess:
                value = sess.run(y, feed, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
            nodes = {n.name: n.op for g in meta.partition_graphs for n in g.node}
            results[name] = value, nodes
        assert y.op.name not in results["on"][1] and f"{y.op.name}/Tanh" in results["on"][1]
        assert results["off"][1][y.op.name] == f.name
        np.testing.assert_array_equal(results["on"][0], results["off"][0])
        np.testing.assert_allclose(results["on"][0], np.tanh(feed[a]) * 2.0, rtol=1e-6)
