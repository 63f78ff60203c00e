"""The meta optimizer: configuration (RewriterConfig, OptimizerOptions, TW_GRAPPLER), the graph it
leaves the user, the optimised graph in RunMetadata and in dumps, stateful kernels kept across
plans, failures, and multi-device plans."""
import dataclasses
import glob
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.grappler import meta_optimizer
from tensorweave.grappler.settings import ALL_OFF, ALL_ON, settings_for
from tests.grappler.helpers import GrapplerEnv, off_config, on_config



def _partition_types(sess, fetches, feed_dict=None):
    meta = tf.RunMetadata()
    sess.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return sorted(n.op for g in meta.partition_graphs for n in g.node if n.op not in ("_Arg", "_Retval"))


def _model():
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    y = tf.nn.relu(tf.matmul(x, w) + tf.constant([1.0, -1.0]))
    out = tf.identity(y * tf.ones([4, 2]) + tf.zeros([2]) * 0.0, name="out")
    return x, out


def test_defaults_follow_tf():
    s = settings_for(tf.ConfigProto())
    assert (s.common_subgraph_elimination and s.constant_folding and s.arithmetic_optimization and s.remapping
            and s.dependency_optimization)
    assert s.iterations == 2 and s.min_graph_nodes == 4 and s.max_constant_bytes == 10 << 20


def test_toggles_and_classic_optimizer_options():
    config = tf.ConfigProto()
    rewrite = config.graph_options.rewrite_options
    rewrite.remapping = rewrite.OFF
    rewrite.arithmetic_optimization = rewrite.OFF
    rewrite.constant_folding = rewrite.OFF
    rewrite.meta_optimizer_iterations = rewrite.ONE
    rewrite.min_graph_nodes = -1
    s = settings_for(config)
    assert not s.remapping and not s.arithmetic_optimization and s.dependency_optimization
    assert s.constant_folding  # the classic optimizer (opt_level L1) still folds constants, as in TF
    assert s.iterations == 1 and s.min_graph_nodes == -1
    config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
    assert not settings_for(config).constant_folding
    config.graph_options.optimizer_options.do_constant_folding = True
    assert settings_for(config).constant_folding
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    s = settings_for(config)
    assert not s.dependency_optimization and s.constant_folding and not s.common_subgraph_elimination
    assert not settings_for(off_config()).any_pass


def test_env_test_mode():
    with GrapplerEnv("aggressive"):
        assert settings_for(off_config()) == ALL_ON
    with GrapplerEnv("off"):
        assert settings_for(off_config()) == ALL_OFF
        # function inlining (after placement) is still the configuration's to decide
        assert settings_for(tf.ConfigProto()) == dataclasses.replace(ALL_OFF, function_optimization=True)


def test_optimised_graph_in_run_metadata_and_user_graph_untouched():
    with tf.Graph().as_default() as g:
        x, out = _model()
        before = g.as_graph_def()
        xv = np.ones((4, 3), np.float32)
        with tf.Session(config=off_config()) as sess:
            plain = _partition_types(sess, out, {x: xv})
            expected = sess.run(out, {x: xv})
        with tf.Session(config=on_config()) as sess:
            optimized = _partition_types(sess, out, {x: xv})
            np.testing.assert_array_equal(sess.run(out, {x: xv}), expected)
        assert "MatMul" in plain and "Mul" in plain
        assert optimized == ["Const", "Const", "Identity", "_FusedMatMul"]
        assert g.as_graph_def() == before
        assert all(not op.name.startswith("ConstantFolding") for op in g.get_operations())


def test_min_graph_nodes_skips_small_graphs():
    with tf.Graph().as_default():
        x, out = _model()
        config = tf.ConfigProto()
        config.graph_options.rewrite_options.min_graph_nodes = 1000
        config.graph_options.rewrite_options.remapping = config.graph_options.rewrite_options.ON
        config.graph_options.optimizer_options.opt_level = tf.OptimizerOptions.L0
        with tf.Session(config=config) as sess:
            assert "_FusedMatMul" not in _partition_types(sess, out, {x: np.ones((4, 3), np.float32)})


def test_dump_with_tf_dump_graph_prefix(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_DUMP_GRAPH_PREFIX", str(tmp_path))
    with tf.Graph().as_default():
        x, out = _model()
        with tf.Session(config=on_config()) as sess:
            sess.run(out, {x: np.ones((4, 3), np.float32)})
    dumps = glob.glob(os.path.join(str(tmp_path), "after_MetaOptimizer_*.pbtxt"))
    assert dumps and '"_FusedMatMul"' in open(dumps[0]).read()


def test_stateful_kernel_keeps_state_across_plans():
    """A random op rewired by the passes (its shape input folded) is still the user's kernel."""
    def draws(config):
        with tf.Graph().as_default():
            tf.set_random_seed(4)
            x = tf.placeholder(tf.float32, [3, 2])
            r = tf.random_uniform(tf.shape(x), seed=2)
            with tf.Session(config=config) as sess:
                first = sess.run(r, {x: np.zeros((3, 2), np.float32)})
                second = sess.run([r, tf.identity(r)], {x: np.zeros((3, 2), np.float32)})[0]
                return first, second

    on, off = draws(on_config()), draws(off_config())
    np.testing.assert_array_equal(on[0], off[0])
    np.testing.assert_array_equal(on[1], off[1])
    assert not np.array_equal(on[0], on[1])


def test_failing_optimizer_leaves_graph_unless_fail_on_errors(monkeypatch):
    def broken(graph, context):
        raise RuntimeError("broken pass")

    monkeypatch.setattr(meta_optimizer, "enabled_passes", lambda settings: [("broken", broken)])
    with tf.Graph().as_default():
        x, out = _model()
        xv = np.ones((4, 3), np.float32)
        with tf.Session(config=on_config()) as sess:
            assert "MatMul" in _partition_types(sess, out, {x: xv})
        config = on_config()
        config.graph_options.rewrite_options.fail_on_optimizer_errors = True
        with tf.Session(config=config) as sess:
            with pytest.raises(RuntimeError, match="broken pass"):
                sess.run(out, {x: xv})


def test_multi_device_plan_numbers_and_devices_kept():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [4, 3])
            a = tf.nn.relu(tf.matmul(x, tf.ones([3, 3])) + tf.ones([3]))
        with tf.device("/cpu:1"):
            b = tf.identity(a) * 1.0 + tf.square(a)
            c = tf.square(a)               # duplicate on cpu:1 merged, not with anything on cpu:0
        out = b + c
        xv = np.arange(12, dtype=np.float32).reshape(4, 3)
        results = {}
        for label, config in (("off", off_config()), ("on", on_config())):
            config.device_count["CPU"] = 2
            with tf.Session(config=config) as sess:
                meta = tf.RunMetadata()
                results[label] = sess.run(out, {x: xv}, options=tf.RunOptions(output_partition_graphs=True),
                                          run_metadata=meta)
                devices = {n.name: n.device for g in meta.partition_graphs for n in g.node}
        np.testing.assert_array_equal(results["on"], results["off"])
        assert devices[a.op.name].endswith("CPU:0") and devices[out.op.name].endswith("CPU:1")
