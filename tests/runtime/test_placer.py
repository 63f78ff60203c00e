"""The placer (white paper 3.2.1, 4.3): constraints, soft placement, colocation groups, the
cost-model simulation (static estimates, then measured times), memory limits, the device
registry and placement logging."""
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.runtime import device as device_lib
from tensorweave.runtime.device import Device, create_devices
from tensorweave.runtime.placer import Placer

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"

# -- test-only ops ---------------------------------------------------------------------------------
TestCpuOnly = define_op("TestCpuOnly", inputs=["x: float"], outputs=["y: float"], shape_fn=_util.unchanged)


@TestCpuOnly.kernel(device_types=["CPU"])
def _cpu_only_kernel(ctx):
    return lambda x: x + 1.0


TestSlowIdentity = define_op("TestSlowIdentity", inputs=["x: float"], outputs=["y: float"],
                             shape_fn=_util.unchanged)


@TestSlowIdentity.kernel()
def _slow_identity_kernel(ctx):
    def compute(x):
        time.sleep(0.03)  # tiny tensors, so the static estimate calls it cheap
        return x
    return compute


def config(n, **kwargs):
    return tf.ConfigProto(device_count={"CPU": n}, operation_timeout_in_ms=20000, **kwargs)


def device_of(t):
    op = t if isinstance(t, tf.Operation) else t.op
    return op._assigned_device


# -- constraints ----------------------------------------------------------------------------------
def test_explicit_and_partial_constraints_are_honoured():
    with tf.device("/device:CPU:1"):
        a = tf.constant(2.0)
    with tf.device("/device:CPU:*"):
        b = a + 1.0
    with tf.device("/job:localhost/task:0/device:CPU:2"):
        c = b * 2.0
    with tf.Session(config=config(3)) as sess:
        assert sess.run(c) == 6.0
    assert device_of(a) == CPU.format(1)
    assert device_of(b).startswith("/job:localhost/replica:0/task:0/device:CPU:")
    assert device_of(c) == CPU.format(2)


def test_impossible_constraint_is_rejected_naming_node_and_constraint():
    with tf.device("/device:CPU:5"):
        x = tf.constant(1.0, name="far_away")
    with tf.Session(config=config(2)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Cannot assign a device for operation far_away: .*'/device:CPU:5'"):
            sess.run(x)
    with tf.Session(config=config(2, allow_soft_placement=True)) as sess:
        assert sess.run(x) == 1.0
    assert device_of(x) in (CPU.format(0), CPU.format(1))


def test_soft_placement_keeps_the_satisfiable_part_of_a_request():
    with tf.device("/job:localhost/device:GPU:0"):
        x = tf.constant(3.0)
    with tf.device("/job:ps"):
        y = x + 1.0
    with tf.Session(config=config(2)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="no devices matching"):
            sess.run(y)
    with tf.Session(config=config(2, allow_soft_placement=True)) as sess:
        assert sess.run(y) == 4.0


def test_new_device_type_plugs_in_through_the_registry(monkeypatch):
    def factory(spec, num_threads, cfg):
        return Device(spec, np, num_threads)

    monkeypatch.setitem(device_lib._FACTORIES, "TWTEST", factory)
    with tf.device("/device:TWTEST:0"):
        doubled = tf.constant([1.0, 2.0]) * 2.0    # generic kernels serve any array device
        only_cpu = apply_op(TestCpuOnly, x=doubled)
    cfg = tf.ConfigProto(device_count={"CPU": 1, "TWTEST": 1}, operation_timeout_in_ms=20000)
    with tf.Session(config=cfg) as sess:
        names = [(d.name, d.device_type) for d in sess.list_devices()]
        assert ("/job:localhost/replica:0/task:0/device:TWTEST:0", "TWTEST") in names
        assert sess.run(doubled).tolist() == [2.0, 4.0]
        assert device_of(doubled) == "/job:localhost/replica:0/task:0/device:TWTEST:0"
        with pytest.raises(tf.errors.InvalidArgumentError, match="no supported kernel for TWTEST"):
            sess.run(only_cpu)
    cfg.allow_soft_placement = True
    with tf.Session(config=cfg) as sess:
        assert sess.run(only_cpu).tolist() == [3.0, 5.0]
        assert device_of(only_cpu) == CPU.format(0)


# -- colocation -------------------------------------------------------------------------------------
def test_colocation_groups_share_a_device():
    with tf.device("/device:CPU:1"):
        v = tf.Variable(1.0)
    bump = tf.assign_add(v, 1.0)                  # a reference input: runs where the variable lives
    with tf.colocate_with(v.op):
        near = tf.constant(5.0)
    marked = tf.constant(7.0)
    marked.op._set_attr("_class", ["loc:@" + v.op.name])
    total = near + marked + bump
    with tf.Session(config=config(3)) as sess:
        sess.run(v.initializer)
        assert sess.run(total) == 14.0
    for t in (v, bump, near, marked):
        assert device_of(t) == CPU.format(1)


def test_conflicting_colocation_is_rejected_or_softened():
    with tf.device("/device:CPU:0"):
        a = tf.constant(1.0, name="a")
    with tf.device("/device:CPU:1"):
        b = tf.constant(2.0, name="b")
    b.op._set_attr("_class", ["loc:@a"])
    s = a + b
    with tf.Session(config=config(2)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot colocate nodes .*a.* and .*b"):
            sess.run(s)
    with tf.Session(config=config(2, allow_soft_placement=True)) as sess:
        assert sess.run(s) == 3.0
    assert device_of(a) == device_of(b)


def test_stateful_nodes_keep_their_device_in_every_plan():
    v = tf.Variable(np.ones((256, 256), np.float32))
    heavy = tf.reduce_sum(tf.matmul(v, tf.constant(np.ones((256, 256), np.float32))))
    bump = tf.assign_add(v, tf.ones_like(v))
    with tf.Session(config=config(2)) as sess:
        sess.run(v.initializer)
        first = device_of(v)
        sess.run(bump)
        assert sess.run(heavy) == 256.0 * 256 * 256 * 2
        sess.run(bump.op)
        assert device_of(v) == first
        assert sess.run(v)[0, 0] == 3.0


# -- the cost-model simulation ----------------------------------------------------------------------
def towers(n=512, layers=2):
    outs, matmuls = [], []
    for k in range(2):
        h = tf.constant(np.full((n, n), 0.001, np.float32))
        tower = []
        for _ in range(layers):
            h = tf.matmul(h, tf.constant(np.full((n, n), 0.001, np.float32)))
            tower.append(h)
            h = tf.nn.relu(h)
            tower.append(h)
        matmuls.append(tower)
        outs.append(tf.reduce_sum(h))
    return tf.add_n(outs), matmuls


def test_independent_heavy_branches_go_to_different_devices():
    total, tower_ops = towers()
    with tf.Session(config=config(2)) as sess:
        expected = sess.run(total)
    first = {device_of(t) for t in tower_ops[0]}
    second = {device_of(t) for t in tower_ops[1]}
    assert len(first) == 1 and len(second) == 1 and first != second   # cheap relus follow their data
    with tf.Graph().as_default():
        total1, _ = towers()
        with tf.Session(config=config(1)) as sess:
            assert sess.run(total1) == expected


def test_a_single_chain_is_not_scattered():
    h = tf.constant(np.full((256, 256), 0.01, np.float32))
    for _ in range(4):
        h = tf.nn.relu(tf.matmul(h, h)) + 1.0
    out = tf.reduce_sum(h)
    with tf.Session(config=config(3)) as sess:
        sess.run(out)
    devices = {op._assigned_device for op in tf.get_default_graph().get_operations()}
    assert len(devices) == 1


def test_measured_costs_replace_static_estimates():
    x = tf.constant([1.0, 2.0])
    a = apply_op(TestSlowIdentity, x=x)
    b = apply_op(TestSlowIdentity, x=x * 3.0)
    out = a + b
    with tf.Session(config=config(2)) as sess:
        assert sess.run(out).tolist() == [4.0, 8.0]
        assert device_of(a) == device_of(b)     # statically both look trivial
        md = tf.RunMetadata()
        sess.run(out, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        assert sess.run(out).tolist() == [4.0, 8.0]
        assert device_of(a) != device_of(b)     # measured: 30 ms each, worth two devices


def test_device_memory_limit_is_respected():
    g = tf.Graph()
    with g.as_default():
        variables = [tf.Variable(tf.zeros([512, 512]), name=f"big{i}") for i in range(2)]
    ops = g.get_operations()
    devices = create_devices({"CPU": 2}, 1)
    devices[0].memory_limit = 1_500_000     # room for one 1 MiB variable
    assignment = Placer(devices).place(ops)
    homes = {assignment[id(v.op)].name for v in variables}
    assert homes == {CPU.format(0), CPU.format(1)}
    devices = create_devices({"CPU": 2}, 1)
    for d in devices:
        d.memory_limit = 100_000
    with pytest.raises(tf.errors.ResourceExhaustedError, match="no feasible device has that much memory"):
        Placer(devices).place(ops)


def test_log_device_placement(capsys):
    with tf.device("/device:CPU:1"):
        tf.constant(1.0, name="logged")
    with tf.Session(config=config(2, log_device_placement=True)) as sess:
        sess.run("logged:0")
    assert "logged: (Const): /job:localhost/replica:0/task:0/device:CPU:1" in capsys.readouterr().err


def test_list_devices():
    with tf.Session(config=config(3)) as sess:
        devices = sess.list_devices()
    assert [d.name for d in devices] == [CPU.format(i) for i in range(3)]
    assert all(d.device_type == "CPU" for d in devices)
    assert len({d.incarnation for d in devices}) == 3


def test_gradients_colocated_with_their_ops_when_asked():
    x = tf.constant(np.ones((8, 8), np.float32))
    with tf.device("/device:CPU:1"):
        w = tf.Variable(np.full((8, 8), 0.5, np.float32))
        y = tf.matmul(x, w)
    loss = tf.reduce_sum(y)
    dx, dw = tf.gradients(loss, [x, w], colocate_gradients_with_ops=True)
    with tf.Session(config=config(2)) as sess:
        sess.run(w.initializer)
        gx, gw = sess.run([dx, dw])
    np.testing.assert_array_equal(gx, np.full((8, 8), 4.0))
    np.testing.assert_array_equal(gw, np.full((8, 8), 8.0))
    grad_matmuls = [op for op in tf.get_default_graph().get_operations()
                    if op.type == "MatMul" and op.name.startswith("gradients")]
    assert grad_matmuls and all(op._assigned_device == CPU.format(1) for op in grad_matmuls)
