"""Records what TensorFlow 2.21 writes when tracing and profiling (issue 12), for
tests/tools/ and tests/profiler/: the Chrome trace of a two-device step made by
tensorflow.python.client.timeline (its structure: event kinds, process names, flow pairs),
the cost graph of that step, and tf.compat.v1.profiler's parameter and FLOP reports for a
small model. Run under /opt/tfref only: /opt/tfref/bin/python tests/data/make_tf_tracing_fixtures.py
"""
import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf
from tensorflow.python.client import timeline

from tracing_models import more_ops_model  # beside this script; shared with the tests

tf.disable_eager_execution()
HERE = os.path.dirname(os.path.abspath(__file__))


def two_device_graph():
    """Matmul on CPU:0, relu and sum on CPU:1, the add back on CPU:0: two transfers."""
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, (4, 3), name="a")
        with tf.device("/cpu:0"):
            w = tf.Variable(np.ones((3, 2), np.float32), name="w", use_resource=False)
            b = tf.matmul(a, w, name="mm")
        with tf.device("/cpu:1"):
            c = tf.nn.relu(b, name="relu")
            d = tf.reduce_sum(c, name="sum")
        with tf.device("/cpu:0"):
            e = tf.add(d, 1.0, name="out")
    return g, a, w, e


def trace_structure(trace):
    events = trace["traceEvents"]
    pids = {ev["pid"]: ev["args"]["name"] for ev in events if ev["ph"] == "M" and ev["name"] == "process_name"}
    flows = {}
    for ev in events:
        if ev["ph"] in "st":
            flows.setdefault(ev["id"], {})[ev["ph"]] = [pids[ev["pid"]], ev["name"]]
    return {
        "phases": sorted({ev["ph"] for ev in events}),
        "process_names": [pids[p] for p in sorted(pids)],
        "op_events": sorted([pids[ev["pid"]], ev["args"]["name"], ev["args"]["op"]]
                            for ev in events if ev["ph"] == "X"),
        "op_event_keys": sorted({k for ev in events if ev["ph"] == "X" for k in ev}),
        "flows": sorted([f["s"][0], f["t"][0], f["s"][1]] for f in flows.values()),
        "counter_names": sorted({ev["name"] for ev in events if ev["ph"] == "C"}),
    }


def record_timeline():
    g, a, w, e = two_device_graph()
    cfg = tf.ConfigProto(device_count={"CPU": 2}, graph_options=tf.GraphOptions(build_cost_model=1))
    out = {}
    with tf.Session(graph=g, config=cfg) as sess:
        sess.run(w.initializer)
        meta = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
        sess.run(e, feed_dict={a: np.ones((4, 3), np.float32)}, options=opts, run_metadata=meta)
        for show_memory in (False, True):
            tl = timeline.Timeline(meta.step_stats, graph=g)
            trace = json.loads(tl.generate_chrome_trace_format(show_dataflow=True, show_memory=show_memory))
            out[f"trace_memory_{show_memory}"] = trace_structure(trace)
        tl = timeline.Timeline(meta.step_stats, graph=g)
        trace = json.loads(tl.generate_chrome_trace_format(show_dataflow=False))
        out["trace_no_dataflow"] = trace_structure(trace)
        out["devices"] = sorted(d.device for d in meta.step_stats.dev_stats)
        out["partition_graphs"] = len(meta.partition_graphs)
        cost = [n for n in meta.cost_graph.node if n.device]
        out["cost_graph_nodes"] = sorted(
            [n.name, n.device, len(n.input_info),
             [[o.size, [d.size for d in o.shape.dim], o.dtype] for o in n.output_info]]
            for n in cost if not n.name.startswith("_") and "/_" not in n.name)
        # Without FULL_TRACE, build_cost_model=1 still fills the cost graph and step stats.
        meta = tf.RunMetadata()
        sess.run(e, feed_dict={a: np.ones((4, 3), np.float32)}, run_metadata=meta)
        out["untraced_cost_nodes"] = len(meta.cost_graph.node) > 0
        out["untraced_step_stats_devices"] = len(meta.step_stats.dev_stats)
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(w.initializer)
        meta = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        sess.run(e, feed_dict={a: np.ones((4, 3), np.float32)}, options=opts, run_metadata=meta)
        out["no_cost_model_cost_nodes"] = len(meta.cost_graph.node)
    return out


def small_model():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, (8, 6), name="x")
        with tf.variable_scope("dense1"):
            w1 = tf.get_variable("kernel", (6, 5), initializer=tf.ones_initializer(), use_resource=False)
            b1 = tf.get_variable("bias", (5,), initializer=tf.zeros_initializer(), use_resource=False)
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
        with tf.variable_scope("dense2"):
            w2 = tf.get_variable("kernel", (5, 3), initializer=tf.ones_initializer(), use_resource=False)
            y = tf.matmul(h, w2) + 1.0
        with tf.variable_scope("conv"):
            img = tf.placeholder(tf.float32, (2, 7, 7, 3), name="img")
            k = tf.get_variable("filter", (3, 3, 3, 4), initializer=tf.ones_initializer(), use_resource=False)
            conv = tf.nn.conv2d(img, k, strides=[1, 2, 2, 1], padding="SAME")
            z = tf.reduce_mean(conv * 2.0 - 1.0)
        tf.Variable(0, trainable=False, name="steps", use_resource=False)
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y) + z)
    return g


def proto_tree(node):
    return {"name": node.name, "parameters": node.parameters, "total_parameters": node.total_parameters,
            "float_ops": node.float_ops, "total_float_ops": node.total_float_ops,
            "children": [proto_tree(c) for c in node.children]}


def multi_tree(node):
    return {"name": node.name, "parameters": node.parameters, "total_parameters": node.total_parameters,
            "float_ops": node.float_ops, "total_float_ops": node.total_float_ops,
            "graph_nodes": sorted([n.name, n.float_ops, n.parameters] for n in node.graph_nodes),
            "children": [multi_tree(c) for c in node.children]}


def capture(fn):
    """What tfprof prints on the C-level stdout (it bypasses sys.stdout)."""
    sys.stdout.flush()
    fd = os.dup(1)
    path = os.path.join(HERE, ".tfprof_out.txt")
    with open(path, "w") as f:
        os.dup2(f.fileno(), 1)
        try:
            result = fn()
        finally:
            sys.stdout.flush()
            os.dup2(fd, 1)
            os.close(fd)
    with open(path) as f:
        text = f.read()
    os.remove(path)
    return result, text


def record_profiler():
    g = small_model()
    builder = tf.profiler.ProfileOptionBuilder
    out = {}
    cases = {
        "scope_params": ("scope", builder.trainable_variables_parameter()),
        "scope_flops": ("scope", builder.float_operation()),
        "op_flops": ("op", builder.float_operation()),
        "op_params": ("op", builder.trainable_variables_parameter()),
        "scope_params_depth1": ("scope", builder(builder.trainable_variables_parameter())
                                .with_max_depth(1).build()),
        "scope_params_by_params": ("scope", builder(builder.trainable_variables_parameter())
                                   .order_by("params").build()),
        "scope_flops_dense1": ("scope", builder(builder.float_operation())
                               .with_node_names(show_name_regexes=["dense1/.*"]).build()),
    }
    for key, (cmd, opts) in cases.items():
        result, text = capture(lambda: tf.profiler.profile(g, cmd=cmd, options=opts))
        tree = multi_tree(result) if cmd == "op" else proto_tree(result)
        report = text[text.index("node name |"):text.index("\n======================End of Report")]
        out[key] = {"tree": tree, "report": report.rstrip("\n") + "\n", "options": opts}
    g2 = more_ops_model(tf)
    opts = builder.float_operation()
    result, text = capture(lambda: tf.profiler.profile(g2, cmd="op", options=opts))
    report = text[text.index("node name |"):text.index("\n======================End of Report")]
    out["more_ops_op_flops"] = {"tree": multi_tree(result), "report": report.rstrip("\n") + "\n",
                                "options": opts}
    out["default_options"] = {k: builder.__dict__[k]() for k in
                              ("trainable_variables_parameter", "float_operation", "time_and_memory")}
    return out


def main():
    expected = {"timeline": record_timeline(), "profiler": record_profiler(), "tf_version": tf.__version__}
    path = os.path.join(HERE, "tf_tracing_expected.json")
    with open(path, "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True, default=str)
    print("wrote", path)


if __name__ == "__main__":
    main()
