"""RunMetadata.cost_graph (GraphOptions.build_cost_model), against what TF 2.21 fills for the
same two-device step (tests/data/tf_tracing_expected.json)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.cost_graph import wants_cost_graph
from tests.tools.tracing_programs import expected, traced_step, two_device_graph

FLOAT, INT32 = 1, 3


def by_name(meta):
    return {n.name: n for n in meta.cost_graph.node}


def test_filled_when_build_cost_model_is_set():
    _, meta, _ = traced_step(build_cost_model=1)
    nodes = by_name(meta)
    ids = {n.id: n for n in meta.cost_graph.node}
    assert len(ids) == len(meta.cost_graph.node)  # ids are unique across partitions
    want = expected()["timeline"]["cost_graph_nodes"]
    for name, device, inputs, outputs in want:
        if name == "out/y" or name == "Const":  # constants: a Python scalar's name differs
            continue
        node = nodes[name]
        assert node.device == device and len(node.input_info) == inputs
        got = [[o.size, [d.size for d in o.shape.dim], o.dtype] for o in node.output_info]
        assert got == outputs  # the variable's: its bytes and shape, dtype DT_FLOAT_REF
    mm, relu = nodes["mm"], nodes["relu"]
    assert ids[relu.input_info[0].preceding_node].device == relu.device  # reads its Recv
    assert {ids[i.preceding_node].name for i in mm.input_info} >= {"w/read"}
    assert mm.compute_cost >= 1 and mm.output_info[0].alias_input_port == -1
    sends = [n for n in meta.cost_graph.node if n.is_final]
    assert len(sends) == 2 and {s.device for s in sends} == {nodes["mm"].device, nodes["sum"].device}
    consts = [n for n in meta.cost_graph.node if n.name.startswith("Const")]
    assert consts and all(n.persistent_memory_size == n.output_info[0].size for n in consts)
    assert nodes["w"].persistent_memory_size == 24 and nodes["mm"].persistent_memory_size == 0


def test_untraced_steps_fill_it_too_and_not_without_the_option():
    _, meta, _ = traced_step(build_cost_model=1, trace=False)
    assert (len(meta.cost_graph.node) > 0) == expected()["timeline"]["untraced_cost_nodes"]
    assert len(meta.step_stats.dev_stats) == expected()["timeline"]["untraced_step_stats_devices"]
    _, meta, _ = traced_step(build_cost_model=0)
    assert len(meta.cost_graph.node) == expected()["timeline"]["no_cost_model_cost_nodes"] == 0


def test_every_and_after_schedule():
    # TF: the signature's n-th step (from 0) builds one when n >= after and (n-after+1) % every == 0.
    assert [n for n in range(8) if wants_cost_graph(n, 3, 2)] == [4, 7]
    assert [n for n in range(3) if wants_cost_graph(n, 1, 0)] == [0, 1, 2]
    assert not any(wants_cost_graph(n, 0, 0) for n in range(4))
    g, a, w, e = two_device_graph()
    cfg = tf.ConfigProto(device_count={"CPU": 2}, operation_timeout_in_ms=30000,
                         graph_options=tf.GraphOptions(build_cost_model=2, build_cost_model_after=1))
    with tf.Session(graph=g, config=cfg) as sess:
        sess.run(w.initializer)
        filled = []
        for _ in range(5):
            meta = tf.RunMetadata()
            value = sess.run(e, feed_dict={a: np.ones((4, 3), np.float32)}, run_metadata=meta)
            assert value == pytest.approx(25.0)
            filled.append(len(meta.cost_graph.node) > 0)
    assert filled == [False, False, True, False, True]
