"""tf.profiler beyond the static counts: time and memory from traced steps (Profiler.add_step),
the graph view, advise, outputs, errors, and tf.RegisterStatistics."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_stats import OpStats, get_stats_for_node_def
from tensorweave.profiler.model_analyzer import ALL_ADVICE
from tensorboard.compat.proto import tfprof_log_pb2
from tests.profiler.test_profile_vs_tf import small_model

Builder = tf.profiler.ProfileOptionBuilder


def quiet(options):
    return Builder(options).with_empty_output().build()


@pytest.fixture(scope="module")
def traced():
    """The small model, two traced training steps, and their RunMetadata."""
    g = small_model()
    metas = []
    with g.as_default():
        train = g.get_operation_by_name("GradientDescent")
        feeds = {g.get_tensor_by_name("x:0"): np.ones((8, 6), np.float32),
                 g.get_tensor_by_name("conv/img:0"): np.ones((2, 7, 7, 3), np.float32)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                meta = tf.RunMetadata()
                sess.run(train, feeds, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                         run_metadata=meta)
                metas.append(meta)
    return g, metas


def find(node, name):
    if node.name == name:
        return node
    for child in node.children:
        found = find(child, name)
        if found is not None:
            return found
    return None


def test_time_and_memory_per_op_from_a_traced_step(traced):
    g, metas = traced
    opts = Builder(Builder.time_and_memory(min_micros=0, min_bytes=0)).with_empty_output().build()
    root = tf.profiler.profile(g, run_meta=metas[0], cmd="scope", options=opts)
    step = {n.node_name: n for d in metas[0].step_stats.dev_stats for n in d.node_stats}
    matmul = find(root, "dense1/MatMul")
    assert matmul is not None and matmul.exec_micros == step["dense1/MatMul"].all_end_rel_micros
    assert matmul.requested_bytes == matmul.output_bytes == 8 * 5 * 4  # its float32 (8, 5) output
    assert matmul.run_count == 1
    conv = find(root, "conv/Conv2D")  # the training step never ran it (pruned)
    assert conv.run_count == 0 and conv.exec_micros == 0 and conv.float_ops == 6912
    # Totals add up: the root holds every shown node's time and bytes.
    shown = []

    def walk(n):
        shown.append(n)
        for c in n.children:
            walk(c)
    walk(root)
    assert root.total_exec_micros == sum(n.exec_micros for n in shown)
    assert root.total_requested_bytes == sum(n.requested_bytes for n in shown) > 0


def test_without_run_meta_times_are_zero_and_hidden(traced):
    g, _ = traced
    root = tf.profiler.profile(g, cmd="op", options=quiet(Builder.time_and_memory()))
    assert root.total_exec_micros == 0 and root.children == []


def test_profiler_steps_average_and_select(traced):
    g, metas = traced
    prof = tf.profiler.Profiler(g)
    for i, meta in enumerate(metas):
        prof.add_step(i, meta)
    times = [{n.node_name: n.all_end_rel_micros for d in m.step_stats.dev_stats for n in d.node_stats}
             for m in metas]
    base = Builder(Builder.time_and_memory(min_micros=0, min_bytes=0)).with_empty_output()
    for step in (0, 1):
        root = prof.profile_name_scope(Builder(base.build()).with_step(step).build())
        assert find(root, "dense1/MatMul").exec_micros == times[step]["dense1/MatMul"]
    root = prof.profile_name_scope(Builder(base.build()).with_step(-1).build())
    assert find(root, "dense1/MatMul").exec_micros == (times[0]["dense1/MatMul"] + times[1]["dense1/MatMul"]) // 2
    ops = prof.profile_operations(base.build())
    names = []
    node = ops
    while node.children:
        node = node.children[0]
        names.append(node.name)
    assert "Conv2DBackpropFilter" in names and "MatMul" in names
    matmul = find(ops, "MatMul")
    assert sorted(n.name for n in matmul.graph_nodes)[:2] == ["dense1/MatMul", "dense2/MatMul"]
    assert matmul.exec_micros == sum(n.exec_micros for n in matmul.graph_nodes)


def test_graph_view_hangs_variables_under_their_consumers(traced):
    g, _ = traced
    prof = tf.profiler.Profiler(g)
    root = prof.profile_graph(quiet(Builder.trainable_variables_parameter()))
    assert root.total_parameters == 158
    kernel = find(root, "dense1/kernel")
    assert kernel is not None and kernel.parameters == 30
    parents = [c for c in root.children if find(c, "dense1/kernel") is not None]
    assert len(parents) == 1 and parents[0].name.startswith("GradientDescent/update_dense1/kernel")


def test_advise(traced, capsys):
    g, metas = traced
    advice = tf.profiler.advise(g, run_meta=metas[0])
    assert set(advice.checkers) == set(ALL_ADVICE)
    top = advice.checkers["ExpensiveOperationChecker"].reports
    assert len(top) == 3 and top[0].startswith("top 1 operation type: ")
    assert "CPU" in advice.checkers["AcceleratorUtilizationChecker"].reports[0]
    out = capsys.readouterr().out
    assert "ExpensiveOperationChecker:" in out
    prof = tf.profiler.Profiler(g)
    assert "No traced step" in prof.advise({"ExpensiveOperationChecker": {}}).checkers[
        "ExpensiveOperationChecker"].reports[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown checker"):
        prof.advise({"NoSuchChecker": {}})


def test_nchw_is_reported_by_the_operation_checker(capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, (1, 3, 8, 8))
        tf.nn.conv2d(x, tf.ones((3, 3, 3, 2)), [1, 1, 1, 1], "SAME", data_format="NCHW", name="c")
    reports = tf.profiler.advise(g, options={"OperationChecker": {}}).checkers["OperationChecker"].reports
    assert len(reports) == 1 and "NCHW" in reports[0] and "c" in reports[0]


def test_file_and_empty_output(traced, tmp_path, capsys):
    g, _ = traced
    path = tmp_path / "report.txt"
    opts = Builder(Builder.trainable_variables_parameter()).with_file_output(str(path)).build()
    tf.profiler.profile(g, options=opts)
    text = path.read_text()
    assert text.startswith("node name | # parameters\n_TFProfRoot (--/158 params)")
    tf.profiler.profile(g, options=quiet(Builder.trainable_variables_parameter()))
    assert capsys.readouterr().out == ""


def test_options_and_errors(traced, capsys):
    g, _ = traced
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown cmd"):
        tf.profiler.profile(g, cmd="lines")
    with pytest.raises(tf.errors.InvalidArgumentError, match="code"):
        tf.profiler.profile(g, cmd="code")
    with pytest.raises(ValueError, match="order_by"):
        tf.profiler.profile(g, options=Builder(quiet(Builder.float_operation())).order_by("speed").build())
    with pytest.raises(tf.errors.InvalidArgumentError, match="output"):
        tf.profiler.profile(g, options=dict(Builder.float_operation(), output="pprof:outfile=x"))
    # Builder: chaining returns the builder, build() copies.
    b = Builder()
    assert b.with_max_depth(3).with_min_parameters(2).select(["params"]) is b
    built = b.build()
    built["select"].append("micros")
    assert b.build()["select"] == ["params"] and b.build()["max_depth"] == 3
    assert Builder().build()["account_displayed_op_only"] is False
    # hide/start/trim name regexes.
    opts = Builder(quiet(Builder.trainable_variables_parameter()))
    root = tf.profiler.profile(g, options=opts.with_node_names(hide_name_regexes=["dense.*"]).build())
    assert [c.name for c in root.children] == ["conv"] and root.total_parameters == 108
    opts = Builder(quiet(Builder.trainable_variables_parameter()))
    root = tf.profiler.profile(g, options=opts.with_node_names(start_name_regexes=["dense2"]).build())
    assert [c.name for c in root.children] == ["dense2"]
    opts = Builder(quiet(Builder.trainable_variables_parameter()))
    root = tf.profiler.profile(g, options=opts.with_node_names(trim_name_regexes=["dense1"]).build())
    assert find(root, "dense1").children == [] and find(root, "dense1").total_parameters == 0
    opts = Builder(quiet(Builder.trainable_variables_parameter())).with_min_parameters(20).build()
    root = tf.profiler.profile(g, options=opts)
    assert sorted(c.name for c in root.children) == ["conv/filter", "dense1/kernel"]


def test_op_log_adds_types_and_flops(traced):
    g, _ = traced
    log = tfprof_log_pb2.OpLogProto()
    entry = log.log_entries.add()
    entry.name = "dense2/kernel"
    entry.types.append("_special")
    entry.float_ops = 7
    opts = Builder(quiet(Builder.trainable_variables_parameter())).with_accounted_types(["_special"]).build()
    root = tf.profiler.profile(g, op_log=log, options=opts)
    assert root.total_parameters == 15
    flops = tf.profiler.profile(g, op_log=log, cmd="op", options=quiet(Builder.float_operation()))
    assert find(flops, "VariableV2").float_ops == 7


def test_register_statistics():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, (3, 4))
        m = tf.matmul(a, tf.ones((4, 5)))
        t = tf.matmul(a, tf.ones((3, 2)), transpose_a=True)
        u = tf.placeholder(tf.float32, (None, 4))
        unknown = tf.matmul(u, tf.ones((4, 5)))
        s = tf.sin(a)
    stats = get_stats_for_node_def(g, m.op.node_def, "flops")
    assert stats.statistic_type == "flops" and stats.value == 2 * 3 * 4 * 5
    assert get_stats_for_node_def(g, t.op.node_def, "flops").value == 2 * 3 * 4 * 2
    assert get_stats_for_node_def(g, s.op.node_def, "flops").value is None  # nothing registered
    with pytest.raises(ValueError, match="not fully defined"):
        get_stats_for_node_def(g, unknown.op.node_def, "flops")

    @tf.RegisterStatistics("Sin", "weight_parameters")
    def _sin_weights(graph, node):
        return OpStats("weight_parameters", 42)
    assert get_stats_for_node_def(g, s.op.node_def, "weight_parameters").value == 42
    with pytest.raises(KeyError):
        tf.RegisterStatistics("Sin", "weight_parameters")(_sin_weights)
    with pytest.raises(TypeError):
        tf.RegisterStatistics("A,B", "flops")
    total = OpStats("flops", 3)
    total += OpStats("flops", 4)
    total += OpStats("flops")
    assert total.value == 7
    with pytest.raises(ValueError):
        total += OpStats("bytes", 1)


def test_write_op_log(traced, tmp_path):
    g, _ = traced
    extra = tf.profiler.OpLogProto()
    entry = extra.log_entries.add()
    entry.name = "dense1/MatMul"
    entry.types.append("_mine")
    tf.profiler.write_op_log(g, str(tmp_path / "logs"), op_log=extra)
    log = tf.profiler.OpLogProto()
    log.ParseFromString((tmp_path / "logs" / "tfprof_log.pb").read_bytes())
    entries = {e.name: e for e in log.log_entries}
    assert entries["dense1/MatMul"].float_ops == 480 and list(entries["dense1/MatMul"].types) == ["_mine"]
    assert sorted(entries["dense1/kernel"].types) == ["_trainable_variables", "_variables"]
    assert list(entries["steps"].types) == ["_variables"]
    assert entries["conv/Conv2D"].float_ops == 6912
    assert "x" not in entries  # no FLOPs, no extra type
