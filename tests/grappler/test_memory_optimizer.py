"""Grappler's memory optimizer: recomputation of cheap forward values for gradient nodes
(RECOMPUTATION_HEURISTICS, HEURISTICS, MANUAL with `_recompute_hint`), what it leaves alone, its
triggers, the numbers and gradients it keeps, and the peak memory it saves."""
import json
import os

import numpy as np
import pytest
from tensorboard.compat.proto import attr_value_pb2, rewriter_config_pb2

import tensorweave as tf
from tensorweave.grappler import memory_optimizer
from tensorweave.grappler.settings import Settings, settings_for
from tensorweave.runtime.executor_choice import ExecutorStrategy
from tensorweave.runtime.step_stats import peak_bytes_in_use
from tensorweave.testing import gradient_checker
from tests.data import memory_models
from tests.grappler.helpers import GrapplerEnv, by_name, optimize

RC = rewriter_config_pb2.RewriterConfig
RNG = np.random.RandomState(0)
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


@pytest.fixture(autouse=True)
def configured_passes(monkeypatch):
    """These tests compare configurations: the TW_GRAPPLER test mode would override them."""
    monkeypatch.delenv("TW_GRAPPLER", raising=False)


def only_memory(mode=RC.RECOMPUTATION_HEURISTICS, scope=""):
    return Settings(False, False, False, False, False, min_graph_nodes=-1, fail_on_errors=True,
                    memory_optimization=mode, memory_target_scope=scope)


def gelu(z):
    return 0.5 * z * (1.0 + tf.tanh(0.7978845608 * (z + 0.044715 * z * z * z)))


def mlp(activation=gelu, layers=3, width=8, batch=4, dtype=tf.float32):
    x = tf.placeholder(dtype, [batch, width])
    h = x
    weights = []
    for i in range(layers):
        with tf.name_scope(f"layer{i}"):
            w = tf.Variable((RNG.randn(width, width) / np.sqrt(width)).astype(dtype.as_numpy_dtype))
            b = tf.Variable(RNG.randn(width).astype(dtype.as_numpy_dtype) * 0.1)
            weights += [w, b]
            h = activation(tf.nn.bias_add(tf.matmul(h, w), b))
    loss = tf.reduce_mean(tf.square(h))
    return x, loss, tf.gradients(loss, weights)


def recomputed(ops):
    return sorted(op.name for op in ops if op.name.startswith(memory_optimizer.RECOMPUTED_PREFIX + "/"))


def config(mode):
    c = tf.ConfigProto()
    c.graph_options.rewrite_options.memory_optimization = mode
    return c


def run_with(mode, fetches, feed, strategy=None):
    md = tf.RunMetadata()
    with tf.Session(config=config(mode)) as sess:
        sess._executor_strategy = strategy  # a test hook: None is the runtime's choice
        sess.run(tf.global_variables_initializer())
        values = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                               output_partition_graphs=True), run_metadata=md)
    names = [n.name for g in md.partition_graphs for n in g.node]
    return values, names, md


def test_gradient_nodes_read_copies_that_wait_for_the_gradient():
    with tf.Graph().as_default():
        x, loss, grads = mlp(layers=2)
        ops, _ = optimize([loss] + grads, [x], settings=only_memory())
        names = by_name(ops)
        copies = recomputed(ops)
        # every element-wise node of both GELUs; not the BiasAdds (they read a variable) nor MatMuls
        assert len(copies) == 18 and not any("MatMul" in n or "BiasAdd" in n for n in copies)
        assert "Recomputed/layer1/Tanh" in copies and "Recomputed/layer0/Tanh" in copies
        tanh_grad = names["gradients/layer1/Tanh_grad/TanhGrad"]
        assert tanh_grad.inputs[0].op.name == "Recomputed/layer1/Tanh"
        forward = names["layer1/Tanh"]
        assert all(not c.name.startswith("gradients/") for c in _consumers(ops, forward))
        # the copy waits for a trigger, which waits for gradient values from later in the graph
        copy = names["Recomputed/layer0/Tanh"]
        triggers = [c for c in copy.control_inputs if c.name.startswith("RecomputeTrigger/")]
        assert len(triggers) == 1 and triggers[0].type == "NoOp"
        waited = _control_ancestors(triggers[0])
        assert any(n.startswith("gradients/layer1/") for n in waited)


def _consumers(ops, op):
    return [o for o in ops if any(t.op is op for t in o.inputs)]


def _control_ancestors(op):
    seen, stack = set(), list(op.control_inputs)
    while stack:
        o = stack.pop()
        if o.name not in seen:
            seen.add(o.name)
            stack.extend(o.control_inputs)
    return seen


@pytest.mark.parametrize("activation", [gelu, tf.nn.relu, tf.sigmoid, tf.tanh,
                                        lambda z: z * tf.sigmoid(z)])
def test_numbers_equal_with_recomputation_on_and_off(activation):
    with tf.Graph().as_default():
        x, loss, grads = mlp(activation, layers=3)
        feed = {x: RNG.randn(4, 8).astype(np.float32)}
        off, off_names, _ = run_with(RC.NO_MEM_OPT, [loss] + grads, feed)
        on, on_names, _ = run_with(RC.RECOMPUTATION_HEURISTICS, [loss] + grads, feed)
        assert not recomputed_names(off_names)
        for a, b in zip(off, on):
            np.testing.assert_array_equal(a, b)


def recomputed_names(names):
    return [n for n in names if n.startswith("Recomputed/")]


def test_train_step_with_recomputation_matches_training_without():
    results = {}
    for mode in (RC.NO_MEM_OPT, RC.HEURISTICS):
        with tf.Graph().as_default():
            np.random.seed(0)
            rs = np.random.RandomState(7)
            x = tf.placeholder(tf.float32, [4, 6])
            h = x
            for i in range(3):
                w = tf.Variable((rs.randn(6, 6) * 0.4).astype(np.float32))
                h = tf.nn.elu(tf.matmul(h, w) * 1.5 + 0.1)
            loss = tf.reduce_sum(tf.square(h))
            train = tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
            feed = {x: rs.randn(4, 6).astype(np.float32)}
            with tf.Session(config=config(mode)) as sess:
                sess.run(tf.global_variables_initializer())
                results[mode] = [sess.run([loss, train], feed)[0] for _ in range(5)]
    assert results[RC.NO_MEM_OPT] == results[RC.HEURISTICS]


def test_gradient_check_of_a_small_mlp_with_recomputation_forced():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 4])
        w1 = tf.placeholder(tf.float64, [4, 5])
        w2 = tf.placeholder(tf.float64, [5, 2])
        h = gelu(tf.matmul(x, w1))
        y = tf.sigmoid(tf.matmul(h, w2) + 0.3) * tf.nn.relu(tf.matmul(h, w2) - 0.1)
        values = [RNG.randn(3, 4), RNG.randn(4, 5), RNG.randn(5, 2)]
        with GrapplerEnv("aggressive"):  # every pass on, recomputation with the heuristics
            grads = tf.gradients(tf.reduce_sum(y * y), [x, w1, w2])
            _, names, _ = run_with(RC.DEFAULT_MEM_OPT, grads, dict(zip([x, w1, w2], values)))
            assert len(recomputed_names(names)) >= 8
            pairs = gradient_checker.compute_gradient([x, w1, w2], [v.shape for v in values], y, [3, 2],
                                                      x_init_value=values)
        for theoretical, numerical in pairs:
            np.testing.assert_allclose(theoretical, numerical, rtol=1e-5, atol=1e-5)  # delta 1e-3


def test_manual_mode_recomputes_only_hinted_nodes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 8])
        w = tf.Variable(RNG.randn(8, 8).astype(np.float32))
        z = tf.matmul(x, w)
        a = tf.nn.relu(z)
        b = tf.sigmoid(a) * a
        loss = tf.reduce_sum(b)
        a.op._set_attr(memory_optimizer.RECOMPUTE_HINT, attr_value_pb2.AttrValue(i=0))
        grads = tf.gradients(loss, [w])
        ops, _ = optimize([loss] + grads, [x], settings=only_memory(RC.MANUAL))
        assert recomputed(ops) == ["Recomputed/Relu"]
        ops, _ = optimize([loss] + grads, [x], settings=only_memory(RC.RECOMPUTATION_HEURISTICS))
        assert recomputed(ops) == ["Recomputed/Relu", "Recomputed/Sigmoid"]
        feed = {x: RNG.randn(4, 8).astype(np.float32)}
        off, _, _ = run_with(RC.NO_MEM_OPT, grads, feed)
        on, names, _ = run_with(RC.MANUAL, grads, feed)
        assert recomputed_names(names) == ["Recomputed/Relu"]
        np.testing.assert_array_equal(off[0], on[0])


@pytest.mark.parametrize("mode", [RC.DEFAULT_MEM_OPT, RC.NO_MEM_OPT, RC.SWAPPING_HEURISTICS,
                                  RC.SCHEDULING_HEURISTICS])
def test_modes_without_recomputation_leave_the_graph(mode):
    with tf.Graph().as_default():
        x, loss, grads = mlp(layers=2)
        ops, _ = optimize([loss] + grads, [x], settings=only_memory(mode))
        assert not recomputed(ops)


def test_configuration_read_from_rewriter_config():
    c = config(RC.RECOMPUTATION_HEURISTICS)
    c.graph_options.rewrite_options.memory_optimizer_target_node_name_scope = "backprop/"
    settings = settings_for(c)
    assert settings.recomputation and settings.memory_target_scope == "backprop/"
    assert not settings_for(tf.ConfigProto()).recomputation            # TF's default: no recomputation
    c.graph_options.rewrite_options.disable_meta_optimizer = True
    assert not settings_for(c).recomputation


def test_target_scope_names_the_gradient_nodes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 8])
        w = tf.Variable(RNG.randn(8, 8).astype(np.float32))
        h = tf.tanh(tf.matmul(x, w)) * 2.0
        loss = tf.reduce_sum(h * h)
        with tf.name_scope("outer"):
            grads = tf.gradients(loss, [w], name="backprop")   # nodes named outer/backprop/...
        assert grads[0].op.name.startswith("outer/backprop/")
        ops, _ = optimize([loss] + grads, [x], settings=only_memory())
        assert not recomputed(ops)                        # nothing under gradients/
        ops, _ = optimize([loss] + grads, [x], settings=only_memory(scope="backprop/"))
        assert "Recomputed/Tanh" in recomputed(ops)       # `/backprop/` inside the name matches


def test_never_recomputed_fed_stateful_state_reading_or_gradient_derived_nodes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 8])
        w = tf.Variable(RNG.randn(8, 8).astype(np.float32))
        v = tf.Variable(RNG.randn(8).astype(np.float32), name="v")
        r = tf.Variable(RNG.randn(8).astype(np.float32), name="r", use_resource=True)
        fed = tf.nn.relu(tf.matmul(x, w))                 # fed below: its copy would not see the feed
        noise = tf.random_uniform([4, 8], seed=1)         # stateful: a copy would draw again
        h = tf.multiply(tf.sigmoid(fed), noise, name="h")
        scaled_v = tf.multiply(v, 3.0, name="scaled_v")   # reads v's storage: v may be updated
        scaled_r = tf.multiply(r, 3.0, name="scaled_r")   # before the copy would run
        loss = tf.reduce_sum(h) + tf.reduce_sum(tf.sigmoid(scaled_v) * tf.sigmoid(scaled_r) * h)
        (gw,) = tf.gradients(loss, [w])
        scaled = tf.multiply(gw, 2.0, name="from_grad")   # computed from a gradient: not forward
        final = tf.reduce_sum(scaled * scaled)
        ops, _ = optimize([loss, final], [x, fed], settings=only_memory())
        names = recomputed(ops)
        assert "Recomputed/Sigmoid" in names and "Recomputed/Sigmoid_1" in names
        assert not any(n.startswith(("Recomputed/Relu", "Recomputed/random", "Recomputed/h",
                                     "Recomputed/scaled_", "Recomputed/from_grad")) for n in names)


def test_nodes_inside_loops_are_left_alone():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4])
        _, out = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.sigmoid(v) * v),
                               [tf.constant(0), x])
        (gx,) = tf.gradients(tf.reduce_sum(out), [x])
        ops, _ = optimize([gx], [x], settings=only_memory())
        assert not recomputed(ops)
        feed = {x: np.array([0.5, -1.0, 2.0, 0.0], np.float32)}
        off, _, _ = run_with(RC.NO_MEM_OPT, gx, feed)
        on, _, _ = run_with(RC.RECOMPUTATION_HEURISTICS, gx, feed)
        np.testing.assert_array_equal(off, on)


@pytest.mark.parametrize("strategy", [ExecutorStrategy.SEQUENTIAL, ExecutorStrategy.DATAFLOW])
def test_recomputation_lowers_the_peak_of_a_deep_gelu_mlp(strategy):
    with tf.Graph().as_default():
        x, loss, grads = mlp(layers=8, width=64, batch=32)
        feed = {x: RNG.randn(32, 64).astype(np.float32)}
        peaks, values = {}, {}
        for mode in (RC.NO_MEM_OPT, RC.RECOMPUTATION_HEURISTICS):
            values[mode], names, md = run_with(mode, [loss] + grads, feed, strategy)
            peaks[mode] = max(peak_bytes_in_use(md.step_stats).values())
        for a, b in zip(values[RC.NO_MEM_OPT], values[RC.RECOMPUTATION_HEURISTICS]):
            np.testing.assert_array_equal(a, b)
        activation = 32 * 64 * 4
        # without: the pre-activation and five GELU intermediates per layer wait for the backward
        # pass; with: only the pre-activation (and a layer's worth of copies at a time)
        assert peaks[RC.NO_MEM_OPT] >= 8 * 5 * activation
        assert peaks[RC.RECOMPUTATION_HEURISTICS] <= 0.4 * peaks[RC.NO_MEM_OPT]


def test_recomputes_what_tensorflow_recomputes_with_its_numbers():
    with open(os.path.join(DATA, "tf_memory_expected.json")) as f:
        expected = json.load(f)
    with tf.Graph().as_default():
        x, loss, grads, feed = memory_models.swish_mlp(tf)
        values, _, md = run_with(RC.RECOMPUTATION_HEURISTICS, [loss] + grads, feed)
        graph = {n.name: n for g in md.partition_graphs for n in g.node}
    for ours, theirs in zip(values, expected["on"]["values"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    for off, on in zip(expected["off"]["values"], expected["on"]["values"]):
        np.testing.assert_array_equal(off, on)               # TF: recomputation changes no number
    for name, node in expected["on"]["recomputed"].items():
        assert name in graph and graph[name].op == node["op"]
        if name.startswith(("Recomputed/layer0/", "Recomputed/layer1/")):  # (TF's arithmetic pass
            ours = sorted(i for i in graph[name].input if not i.startswith("^"))  # rewrote layer2)
            assert ours == sorted(node["inputs"])
        assert _waits_for_gradients(graph, name)


def _waits_for_gradients(graph, name):
    """Whether a recomputed node waits, by control edges, on a gradient node (directly, through a
    trigger, or through the recomputed nodes it reads)."""
    node = graph[name]
    for i in node.input:
        src = i.lstrip("^").split(":")[0]
        if i.startswith("^") and (src.startswith("gradients/") or src.startswith("RecomputeTrigger/")):
            return True
        if src.startswith("Recomputed/") and _waits_for_gradients(graph, src):
            return True
    return False
