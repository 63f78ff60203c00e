"""Peak memory of a deep MLP's training step with and without recomputation (issue 17, Grappler's
memory optimizer, RewriterConfig.memory_optimization = RECOMPUTATION_HEURISTICS against
NO_MEM_OPT), and the step time of both, with TensorFlow in the same run.

Workloads: 50 layers of 1024 units, batch 256, plain SGD, two activations:
- `relu`: matmul + bias + Relu. Its backward pass needs one value per layer (the Relu's output,
  read by ReluGrad and by the next layer's weight gradient), and recomputing it would keep its
  input alive instead: recomputation cannot lower this peak (and the remapper fuses the layer
  into one _FusedMatMul, which is not cheap to recompute). Shown to say so.
- `gelu`: matmul + bias + the hand-written tanh GELU (BERT's), whose gradient reads five
  element-wise intermediates per layer. Recomputed from the layer's pre-activation, only that
  one stays alive from the forward to the backward pass. Goal (issue 17): peak at most 0.6x.

Peak memory is read from a FULL_TRACE step's StepStats (the highest allocator_bytes_in_use of
the device's nodes: bytes of live outputs; variables and constants are state, not counted), and
cross-checked with tracemalloc over one untraced step (every NumPy allocation, kernels' scratch
space included). TensorFlow's figures are its step time, and the peak of its own StepStats (with
TF_CPU_ALLOCATOR_USE_BFC=true, the only way its CPU allocator reports bytes in use: that figure
counts all it holds, variables and scratch space too, so compare its ratio, not its bytes).
`TW_BENCH_SIZES=layers,width,batch` (e.g. `10,256,64`) runs a smaller model for a quick check."""
from __future__ import annotations

import os
import time

import common  # noqa: F401  (sets sys.path)
from common import run_tf

import tensorweave as tf

BODY = """
import gc
import statistics
import time
import tracemalloc
import numpy as np

RECOMPUTATION_HEURISTICS, NO_MEM_OPT = 5, 1  # RewriterConfig.MemOptType


def gelu(tf, z):
    return 0.5 * z * (1.0 + tf.tanh(0.7978845608 * (z + 0.044715 * z * z * z)))


def model(tf, activation, layers, width, batch):
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [batch, width])
    h = x
    for i in range(layers):
        with tf.name_scope("layer%d" % i):
            w = tf.Variable((rng.randn(width, width) / np.sqrt(width)).astype(np.float32))
            b = tf.Variable(np.zeros(width, np.float32))
            z = tf.nn.bias_add(tf.matmul(h, w), b)
            h = tf.nn.relu(z) if activation == "relu" else gelu(tf, z)
    loss = tf.reduce_mean(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return train, {x: rng.rand(batch, width).astype(np.float32)}


def stats_peak(step_stats):
    return max([m.allocator_bytes_in_use for d in step_stats.dev_stats for n in d.node_stats for m in n.memory]
               or [0])


def measure(tf, activation, recompute, sizes, steps=3, with_tracemalloc=True):
    graph = tf.Graph()
    with graph.as_default():
        train, feed = model(tf, activation, *sizes)
        config = tf.ConfigProto()
        config.graph_options.rewrite_options.memory_optimization = (
            RECOMPUTATION_HEURISTICS if recompute else NO_MEM_OPT)
        sess = tf.Session(config=config)
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed)  # builds the plan
        md = tf.RunMetadata()
        sess.run(train, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE,
                                                    output_partition_graphs=True), run_metadata=md)
        recomputed = sum(n.name.startswith("Recomputed/") for g in md.partition_graphs for n in g.node)
        traced = None
        if with_tracemalloc:
            gc.collect()
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            sess.run(train, feed)
            traced = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            sess.run(train, feed)
            times.append(time.perf_counter() - t0)
        sess.close()
    return {"peak": stats_peak(md.step_stats), "tracemalloc": traced, "step": statistics.median(times),
            "recomputed": recomputed}


def run_all(tf, sizes, with_tracemalloc=True):
    return {f"{act}/{'on' if on else 'off'}": measure(tf, act, on, sizes, with_tracemalloc=with_tracemalloc)
            for act in ("relu", "gelu") for on in (False, True)}
"""

SIZES = (50, 1024, 256)


def main() -> None:
    sizes = tuple(int(s) for s in os.environ["TW_BENCH_SIZES"].split(",")) if os.environ.get(
        "TW_BENCH_SIZES") else SIZES
    scope: dict = {}
    exec(BODY, scope)
    ours = scope["run_all"](tf, sizes)
    # TensorFlow's CPU allocator reports bytes in use (in its StepStats) only as a BFC allocator;
    # its figure counts everything it holds (variables, kernels' scratch space), not only outputs.
    os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
    theirs = {} if os.environ.get("TW_BENCH_NO_TF") else (
        run_tf(BODY + f"\nresult = run_all(tf, {sizes!r}, with_tracemalloc=False)\n") or {})
    mib = 1 << 20
    print(f"deep MLP: {sizes[0]} layers of {sizes[1]}, batch {sizes[2]}, SGD; peak = bytes of live outputs")
    for act in ("relu", "gelu"):
        off, on = ours[f"{act}/off"], ours[f"{act}/on"]
        print(f"-- {act}: {on['recomputed']} nodes recomputed")
        print(f"   peak (step stats)   off {off['peak'] / mib:8.1f} MiB   on {on['peak'] / mib:8.1f} MiB"
              f"   ratio {on['peak'] / off['peak']:.3f}")
        print(f"   peak (tracemalloc)  off {off['tracemalloc'] / mib:8.1f} MiB   on {on['tracemalloc'] / mib:8.1f} MiB"
              f"   ratio {on['tracemalloc'] / off['tracemalloc']:.3f}")
        print(f"   step time           off {off['step'] * 1e3:8.1f} ms    on {on['step'] * 1e3:8.1f} ms"
              f"    ratio {on['step'] / off['step']:.3f}")
        tf_off, tf_on = theirs.get(f"{act}/off"), theirs.get(f"{act}/on")
        if tf_off and tf_on:
            peaks = (f"peak off {tf_off['peak'] / mib:.1f} MiB, on {tf_on['peak'] / mib:.1f} MiB, ratio "
                     f"{tf_on['peak'] / tf_off['peak']:.3f} ({tf_on['recomputed']} recomputed)"
                     if tf_off["peak"] else "no CPU peak reported")
            print(f"   TensorFlow: step off {tf_off['step'] * 1e3:.1f} ms, on {tf_on['step'] * 1e3:.1f} ms; {peaks}")
            print(f"   step time vs TensorFlow: off {off['step'] / tf_off['step']:.3f}x, "
                  f"on {on['step'] / tf_on['step']:.3f}x")
        else:
            print("   (tensorflow not importable: no comparison)")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"(total {time.perf_counter() - t0:.0f} s)")
