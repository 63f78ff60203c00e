"""Timeline: a traced two-device step as Chrome trace JSON, compared in structure with the trace
TensorFlow 2.21's timeline module writes for the same step (tests/data/tf_tracing_expected.json)."""
import json

import pytest

from tensorweave.python.client import timeline as client_timeline
from tensorweave.tools import timeline
from tests.tools.tracing_programs import expected, trace_structure, traced_step

DEVICES = ["/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:1"]


@pytest.fixture(scope="module")
def step():
    return traced_step()


def cross_device(flows):
    return [f for f in flows if f[0] != f[1]]


def chrome(meta, graph=None, **kwargs):
    return json.loads(timeline.Timeline(meta.step_stats, graph=graph).generate_chrome_trace_format(**kwargs))


def test_tf1_import_path_is_the_same_timeline():
    assert client_timeline.Timeline is timeline.Timeline


def test_step_stats_cover_every_device_with_transfers(step):
    _, meta, value = step
    assert value == pytest.approx(25.0)
    assert sorted(d.device for d in meta.step_stats.dev_stats) == expected()["timeline"]["devices"]
    assert len(meta.partition_graphs) == expected()["timeline"]["partition_graphs"]
    labels = {d.device: [n.timeline_label for n in d.node_stats] for d in meta.step_stats.dev_stats}
    # One Send and one Recv on each side for each of the two transfers, labelled as TF labels them.
    sends = [lbl for lbl in labels[DEVICES[0]] if " = _Send(" in lbl]
    recvs = [lbl for lbl in labels[DEVICES[1]] if " = _Recv(" in lbl]
    assert len(sends) == 1 and sends[0].endswith(f"@{DEVICES[1]})") and "edge_" in sends[0]
    assert len(recvs) == 1 and recvs[0].endswith(f"@{DEVICES[0]})")
    assert any(" = _Recv(" in lbl for lbl in labels[DEVICES[0]])
    assert any(" = _Send(" in lbl for lbl in labels[DEVICES[1]])
    for dev in meta.step_stats.dev_stats:
        for ns in dev.node_stats:
            assert ns.all_end_rel_micros >= 0 and ns.all_start_micros > 0
    stats = {n.node_name: n for d in meta.step_stats.dev_stats for n in d.node_stats}
    # A reduction's NumPy scalar is an output too; the variable's output is its array; a feed is
    # labelled as TF's _Arg.
    assert [(o.slot, len(o.tensor_description.shape.dim)) for o in stats["sum"].output] == [(0, 0)]
    assert stats["sum"].output[0].tensor_description.allocation_description.requested_bytes == 4
    assert stats["w"].output[0].tensor_description.allocation_description.requested_bytes == 24
    feed = next(n for n in stats.values() if n.node_name.startswith("_Feed/"))
    assert timeline.parse_op_label(feed.timeline_label)[1] == "_Arg"


@pytest.mark.parametrize("show_memory", [False, True])
def test_structure_matches_tensorflow(step, show_memory):
    graph, meta, _ = step
    ours = trace_structure(chrome(meta, graph, show_dataflow=True, show_memory=show_memory))
    tf_trace = expected()["timeline"][f"trace_memory_{show_memory}"]
    assert ours["phases"] == tf_trace["phases"]
    assert ours["op_event_keys"] == tf_trace["op_event_keys"]
    assert ours["counter_names"] == tf_trace["counter_names"]
    # Allocators first, then a Compute and a Tensors process per device (TF orders devices as its
    # step stats list them; the set is what must agree).
    assert ours["process_names"][0] == tf_trace["process_names"][0] == "Allocators"
    assert sorted(ours["process_names"]) == sorted(tf_trace["process_names"])
    # One flow arrow per transfer, from the producer's device to the consumer's (arrows between
    # lanes of one device depend on how ops happened to overlap, in TF too).
    assert cross_device(ours["flows"]) == cross_device(tf_trace["flows"]) == tf_trace["flows"]
    # The user's ops appear on the same devices as in TF's trace (constants left out: a Python
    # scalar's Const is named differently, out/y in TF).
    user = {(p, n, o) for p, n, o in map(tuple, tf_trace["op_events"])
            if not n.startswith("_") and o != "Const"}
    assert user <= {tuple(e) for e in ours["op_events"]}


def test_no_dataflow_drops_the_arrows(step):
    graph, meta, _ = step
    ours = trace_structure(chrome(meta, graph, show_dataflow=False))
    assert ours["flows"] == expected()["timeline"]["trace_no_dataflow"]["flows"] == []
    assert ours["phases"] == ["M", "X"]


def test_events_are_chrome_trace_format(step):
    _, meta, _ = step
    trace = chrome(meta, show_memory=True)
    assert set(trace) == {"traceEvents"}
    events = trace["traceEvents"]
    metadata = [e for e in events if e["ph"] == "M"]
    assert events[:len(metadata)] == metadata  # process names come first
    for e in events:
        assert isinstance(e["pid"], int)
        if e["ph"] == "X":
            assert isinstance(e["ts"], int) and e["dur"] >= 0 and e["cat"] == "Op"
            assert e["args"]["name"] and e["args"]["op"] == e["name"]
        if e["ph"] in "st":
            assert e["cat"] == "DataFlow" and isinstance(e["id"], int)
        if e["ph"] == "C":
            assert e["pid"] == 0 and e["args"]["cpu"] >= 0
    # Every flow starts where its tensor's producer ran and ends where the consumer starts.
    compute = {e["args"]["name"]: e for e in events if e["ph"] == "X"}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    for end in (e for e in events if e["ph"] == "t"):
        start = starts[end["id"]]
        producer = compute[start["name"]]
        assert start["pid"] == producer["pid"] and start["ts"] == producer["ts"] + producer["dur"]
        assert (start["pid"], start["tid"]) != (end["pid"], end["tid"])
    assert sum(starts[e["id"]]["pid"] != e["pid"] for e in events if e["ph"] == "t") == 2
    # Objects: each tensor created, snapshotted and deleted; memory ends at zero.
    created = {e["id"] for e in events if e["ph"] == "N"}
    assert created == {e["id"] for e in events if e["ph"] == "D"} and created
    counters = [e for e in events if e["ph"] == "C"]
    assert counters[-1]["args"]["cpu"] == 0 and max(c["args"]["cpu"] for c in counters) > 0


def test_matmul_inputs_in_args_and_lanes(step):
    _, meta, _ = step
    trace = chrome(meta)
    mm = next(e for e in trace["traceEvents"] if e["ph"] == "X" and e["args"]["name"] == "mm")
    assert mm["args"]["input0"] == "a" and mm["args"]["input1"] == "w/read"
    # Lanes: ops on one thread row never overlap.
    rows = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            rows.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_allocator_maximums_and_repeatable(step):
    _, meta, _ = step
    tl = timeline.Timeline(meta.step_stats)
    analysis = tl.analyze_step_stats(show_dataflow=True, show_memory=True)
    peak = analysis.allocator_maximums["cpu"]
    assert peak.num_bytes >= 48 and peak.tensors
    first = tl.generate_chrome_trace_format()
    assert tl.generate_chrome_trace_format() == first  # a second call gives the same trace


def test_timeline_leaves_the_step_stats_unchanged(step):
    _, meta, _ = step
    before = meta.step_stats.SerializeToString()
    timeline.Timeline(meta.step_stats).generate_chrome_trace_format()
    assert meta.step_stats.SerializeToString() == before


def test_bad_op_time():
    from tensorweave.runtime.config import RunMetadata
    with pytest.raises(ValueError, match="op_time"):
        timeline.Timeline(RunMetadata().step_stats).generate_chrome_trace_format(op_time="wall")


def test_label_parsing():
    assert timeline.parse_op_label("mm = MatMul(a, w/read)") == ("mm", "MatMul", ["a", "w/read"])
    assert timeline.parse_op_label("c = Const()") == ("c", "Const", [])
    assert timeline.parse_op_label("no label") == ("unknown", "unknown", [])
