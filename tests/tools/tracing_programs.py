"""The two-device step the tracing tests run (the same program as make_tf_tracing_fixtures.py)."""
import json
import os

import numpy as np

import tensorweave as tf

EXPECTED = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_tracing_expected.json")


def expected():
    with open(EXPECTED) as f:
        return json.load(f)


def two_device_graph():
    """MatMul on CPU:0, relu and sum on CPU:1, the add back on CPU:0: two transfers."""
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, (4, 3), name="a")
        with tf.device("/cpu:0"):
            w = tf.Variable(np.ones((3, 2), np.float32), name="w")
            b = tf.matmul(a, w, name="mm")
        with tf.device("/cpu:1"):
            c = tf.nn.relu(b, name="relu")
            d = tf.reduce_sum(c, name="sum")
        with tf.device("/cpu:0"):
            e = tf.add(d, 1.0, name="out")
    return g, a, w, e


def traced_step(build_cost_model=0, trace=True):
    """RunMetadata of one step of the two-device graph (and the value it computed)."""
    g, a, w, e = two_device_graph()
    cfg = tf.ConfigProto(device_count={"CPU": 2}, operation_timeout_in_ms=30000,
                         graph_options=tf.GraphOptions(build_cost_model=build_cost_model))
    with tf.Session(graph=g, config=cfg) as sess:
        sess.run(w.initializer)
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True) \
            if trace else None
        value = sess.run(e, feed_dict={a: np.ones((4, 3), np.float32)}, options=options, run_metadata=meta)
    return g, meta, value


def trace_structure(trace):
    """What a Chrome trace shows, without times: as the fixture script summarizes TF's."""
    events = trace["traceEvents"]
    pids = {ev["pid"]: ev["args"]["name"] for ev in events
            if ev["ph"] == "M" and ev["name"] == "process_name"}
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
