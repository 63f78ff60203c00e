"""Multi-device benchmark (issue 6): several logical CPU devices in one process.

1. Two independent towers of large matmuls on 1 device and on 2 logical devices (each tower
   pinned to one device with tf.device, and placed automatically by the cost-model placer), with
   one BLAS thread per kernel and no intra-op splitting (ConfigProto(intra_op_parallelism_threads=1):
   each kernel is one single-threaded BLAS call, as the issue asks) and one executor thread per
   device (inter_op_parallelism_threads=1). On 1 device the towers' matmuls then run one after the
   other; on 2 devices at the same time on the two cores: the speed-up is the goal (close to 2x
   on 2 cores). TensorFlow runs the same graphs with intra_op_parallelism_threads=1 (its inter-op
   pool is shared by all devices: 1 thread for 1 device, 2 for 2 devices).
2. For reference, the default configuration, where a large kernel splits its work over the
   device's pool (ops/intra_op.py) so that a single device already uses both cores: the towers on
   1 device with the default threads (and against TensorFlow's defaults), on 1 device with one
   executor thread, and on 2 devices.
3. The per-step overhead partitioning adds: a small graph (a few scalar ops) on 1 device and split
   over 2 devices (Send/Recv through the rendezvous), once as it runs by default (a small step runs
   its partitions in order on the caller's thread) and once forced onto the threaded path that
   large steps take (each partition on its device's thread, receivers woken by senders).
"""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
from common import report, run_tf, time_per_step

import numpy as np

import tensorweave as tf
from tensorweave.runtime import step_plan

N = 1024
LAYERS = 3

# The towers graph, built the same way by both libraries (`tf` and `np` are the caller's).
TOWERS = """
def towers(devices):
    g = tf.Graph()
    with g.as_default():
        rng = np.random.RandomState(0)
        x = tf.placeholder(tf.float32, [N, N])
        outs = []
        for dev in devices:
            with tf.device(dev):
                h = x
                for _ in range(LAYERS):
                    w = tf.constant(rng.rand(N, N).astype(np.float32) / N)
                    h = tf.nn.relu(tf.matmul(h, w))
                outs.append(tf.reduce_sum(h))
        total = tf.add_n(outs)
    return g, total, x
"""

TF_BODY = """
import numpy as np
N, LAYERS = %d, %d
""" % (N, LAYERS) + TOWERS + """
def measure():
    out = {}
    one, two = ["/cpu:0", "/cpu:0"], ["/cpu:0", "/cpu:1"]
    for key, n, devs, inter, intra in (("one", 1, one, 1, 1), ("two", 2, two, 2, 1),
                                       ("one_default", 1, one, 0, 0)):
        g, total, x = towers(devs)
        # per-session pools: TF's are process-wide otherwise, sized by the first session
        config = tf.ConfigProto(device_count={"CPU": n}, inter_op_parallelism_threads=inter,
                                intra_op_parallelism_threads=intra, use_per_session_threads=True)
        sess = tf.Session(graph=g, config=config)
        feed = {x: np.random.RandomState(1).rand(N, N).astype(np.float32) / N}
        out[key] = time_per_step(lambda: sess.run(total, feed), min_time=2.0, warmup=3)
    return out
result = measure()
"""


exec(TOWERS)  # defines towers(devices) -> (graph, total, x) here too


def time_towers(num_devices: int, devices: list[str], inter_op: int, intra_op: int) -> tuple[float, float]:
    g, total, x = towers(devices)  # noqa: F821  (defined by exec above)
    feed = {x: np.random.RandomState(1).rand(N, N).astype(np.float32) / N}
    config = tf.ConfigProto(device_count={"CPU": num_devices}, inter_op_parallelism_threads=inter_op,
                            intra_op_parallelism_threads=intra_op)
    with tf.Session(graph=g, config=config) as sess:
        value = float(sess.run(total, feed))
        seconds = time_per_step(lambda: sess.run(total, feed), min_time=2.0, warmup=3)
        used = {op._assigned_device for op in g.get_operations() if op.type == "MatMul"}
    print(f"    ({num_devices} device(s), inter_op={inter_op}, intra_op={intra_op}: "
          f"matmuls on {len(used)} device(s))")
    return seconds, value


def small_graph_overhead() -> tuple[float, float, float]:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/device:CPU:0"):
            a = tf.constant(1.0)
            b = a + 1.0
        with tf.device("/device:CPU:1"):
            c = b * 2.0
            d = c - a
    times = []
    for n, force_threads in ((1, False), (2, False), (2, True)):
        saved = step_plan.SMALL_STEP_S
        if force_threads:
            step_plan.SMALL_STEP_S = 0.0  # every step takes the threaded path
        try:
            config = tf.ConfigProto(device_count={"CPU": n}, allow_soft_placement=True)
            with tf.Session(graph=g, config=config) as sess:
                assert sess.run(d) == 3.0
                times.append(time_per_step(lambda: sess.run(d)))
        finally:
            step_plan.SMALL_STEP_S = saved
    return times[0], times[1], times[2]


def main() -> None:
    one_dev, two_devs, auto = ["/cpu:0", "/cpu:0"], ["/cpu:0", "/cpu:1"], ["", ""]
    print(f"two towers of {LAYERS} matmuls {N}x{N} (float32)")
    print("device parallelism: one single-threaded BLAS call per kernel (intra_op=1), inter_op=1")
    one, v1 = time_towers(1, one_dev, inter_op=1, intra_op=1)
    two, v2 = time_towers(2, two_devs, inter_op=1, intra_op=1)
    placed, v3 = time_towers(2, auto, inter_op=1, intra_op=1)
    print("reference: default configuration (large kernels split over the device's pool)")
    one_default, v4 = time_towers(1, one_dev, inter_op=0, intra_op=0)
    one_split, _ = time_towers(1, one_dev, inter_op=1, intra_op=0)
    two_default, v5 = time_towers(2, two_devs, inter_op=0, intra_op=0)
    assert all(np.isclose(v1, v) for v in (v2, v3, v4, v5)), (v1, v2, v3, v4, v5)
    theirs = run_tf(TF_BODY) or {}
    report("towers, 1 device (intra_op=1)", one, theirs.get("one"), unit="ms/step")
    report("towers, 2 devices (tf.device, intra_op=1)", two, theirs.get("two"), unit="ms/step")
    report("towers, 2 devices (cost model, intra_op=1)", placed, None, unit="ms/step")
    line = f"{'speed-up 2 devices vs 1 (intra_op=1)':<44s} {one / two:10.2f}x  (placer: {one / placed:.2f}x)"
    if "one" in theirs and "two" in theirs:
        line += f"   tensorflow {theirs['one'] / theirs['two']:.2f}x"
    print(line)
    report("towers, 1 device (default config)", one_default, theirs.get("one_default"), unit="ms/step")
    report("towers, 1 device (inter_op=1, kernels split)", one_split, None, unit="ms/step")
    report("towers, 2 devices (default config)", two_default, None, unit="ms/step")
    base, split, threaded = small_graph_overhead()
    report("small graph, 1 device", base, None)
    report("small graph, 2 devices (in order, 1 thread)", split, None)
    report("small graph, 2 devices (threaded path)", threaded, None)
    print(f"{'partitioning overhead per step':<44s} {(split - base) * 1e6:10.2f} us "
          f"(threaded path: {(threaded - base) * 1e6:.2f} us)")


if __name__ == "__main__":
    main()
