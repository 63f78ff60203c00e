"""A small CNN training step (issue 3): 28x28x1 images, batch 64,
conv5x5x32-relu-maxpool2x2 / conv5x5x64-relu-maxpool2x2 / fc1024-relu / fc10, softmax
cross-entropy, plain SGD. Goal: at most 1.5x TensorFlow's step time in the same run (TensorFlow
runs it with oneDNN near this machine's matmul ceiling).

Also prints the convolution kernels alone (forward, gradient w.r.t. the filter and w.r.t. the
input of the second convolution, 64x14x14x32 -> 64 with 5x5 filters) so a regression can be
pinned on them or on the rest of the step.

Then the train step's time by op type (issue 17), from RunMetadata step stats of traced steps
(FULL_TRACE) in both systems: the median over traced steps of each type's summed kernel time.
Kernels run concurrently on the two cores, so the per-type sums add up to more than the step,
and a kernel's time there includes waiting for the core or the GIL another kernel holds: the same
table from a session with one inter-op and one intra-op thread gives each kernel's own time.
When an interpreter with PyTorch is found (this one, $TENSORWEAVE_TORCH_PYTHON, or a reference
venv) the same network and step (NCHW, SGD, as many threads as cores) is timed there too."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_in, run_tf, time_per_step, torch_python

import tensorweave as tf

BODY = """
def build_and_time(tf, np):
    rng = np.random.RandomState(0)
    images = rng.rand(64, 28, 28, 1).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]
    x = tf.placeholder(tf.float32, [64, 28, 28, 1])
    y = tf.placeholder(tf.float32, [64, 10])

    def conv_pool(h, channels_in, channels_out):
        w = tf.Variable(tf.truncated_normal([5, 5, channels_in, channels_out], stddev=0.1))
        b = tf.Variable(tf.constant(0.1, shape=[channels_out]))
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME"), b))
        return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    h = conv_pool(conv_pool(x, 1, 32), 32, 64)
    h = tf.reshape(h, [-1, 7 * 7 * 64])
    w3 = tf.Variable(tf.truncated_normal([7 * 7 * 64, 1024], stddev=0.02))
    b3 = tf.Variable(tf.constant(0.1, shape=[1024]))
    h = tf.nn.relu(tf.matmul(h, w3) + b3)
    w4 = tf.Variable(tf.truncated_normal([1024, 10], stddev=0.02))
    b4 = tf.Variable(tf.constant(0.1, shape=[10]))
    logits = tf.matmul(h, w4) + b4
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)

    # the second convolution's three kernels on their own (variables: TF would fold constants)
    a = tf.Variable(rng.rand(64, 14, 14, 32).astype(np.float32))
    f = tf.Variable(rng.rand(5, 5, 32, 64).astype(np.float32))
    g = tf.Variable(rng.rand(64, 14, 14, 64).astype(np.float32))
    strides = [1, 1, 1, 1]
    conv = tf.nn.conv2d(a, f, strides, "SAME")
    conv_filter = tf.nn.conv2d_backprop_filter(a, [5, 5, 32, 64], g, strides, "SAME")
    conv_input = tf.nn.conv2d_backprop_input([64, 14, 14, 32], f, g, strides, "SAME")

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {x: images, y: labels}
    ops = {name: t.op for name, t in
           (("conv", conv), ("conv_filter", conv_filter), ("conv_input", conv_input))}
    result = {"train_step": time_per_step(lambda: sess.run(train_op, feed), min_time=2.0),
              "forward": time_per_step(lambda: sess.run(loss, feed))}
    for name, op in ops.items():
        result[name] = time_per_step(lambda: sess.run(op), warmup=5)
    result["by_type"] = op_type_times(tf, np, sess, train_op, feed)
    # the same on one thread (one inter-op and one intra-op thread): each kernel's own time,
    # without the other core's kernels or the GIL hand-offs between them counted in it
    one = tf.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
    serial = tf.Session(config=one)
    serial.run(tf.global_variables_initializer())
    result["serial_step"] = time_per_step(lambda: serial.run(train_op, feed), min_time=2.0)
    result["serial_by_type"] = op_type_times(tf, np, serial, train_op, feed)
    return result


def op_type_times(tf, np, sess, fetch, feed, steps=15):
    # {op type: median seconds per step}, summed over the step's nodes of that type
    per_step = []
    for _ in range(steps):
        meta = tf.RunMetadata()
        sess.run(fetch, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
        sums = {}
        for dev in meta.step_stats.dev_stats:
            for node in dev.node_stats:
                # "name = Type(inputs)": the type that ran (TF's remapper renames fused nodes)
                label = node.timeline_label
                if " = " not in label:
                    continue  # _SOURCE, _SINK
                kind = label.split(" = ", 1)[1].split("(", 1)[0]
                if kind.startswith("_") and kind != "_FusedConv2D":
                    continue  # feeds, fetches, transfers the runtime added
                sums[kind] = sums.get(kind, 0.0) + node.all_end_rel_micros * 1e-6
        per_step.append(sums)
    kinds = sorted({k for s in per_step for k in s})
    return {k: float(np.median([s.get(k, 0.0) for s in per_step])) for k in kinds}
"""

TORCH_BODY = """
import os
import numpy as np
import torch
# the same number of threads as tensorweave's CPU device (one per core it may use)
torch.set_num_threads(len(os.sched_getaffinity(0)) or 1)
rng = np.random.RandomState(0)
images = torch.from_numpy(rng.rand(64, 1, 28, 28).astype(np.float32))
labels = torch.from_numpy(rng.randint(0, 10, 64))
nn = torch.nn
model = nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
                      nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
                      nn.Flatten(), nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()


def step():
    opt.zero_grad()
    loss_fn(model(images), labels).backward()
    opt.step()


def forward():
    with torch.no_grad():
        loss_fn(model(images), labels)


result = {"train_step": time_per_step(step, min_time=2.0), "forward": time_per_step(forward),
          "threads": torch.get_num_threads(), "version": torch.__version__}
torch.set_num_threads(1)
result["serial_step"] = time_per_step(step, min_time=2.0)
"""


def main() -> None:
    scope: dict = {"time_per_step": time_per_step}
    exec(BODY, scope)
    ours = scope["build_and_time"](tf, np)
    theirs = run_tf(BODY + "\nimport numpy as np\nresult = build_and_time(tf, np)\n") or {}
    report("cnn conv2d 64x14x14x32 5x5 -> 64", ours["conv"], theirs.get("conv"), unit="ms/step")
    report("cnn conv2d_backprop_filter (same shapes)", ours["conv_filter"], theirs.get("conv_filter"),
           unit="ms/step")
    report("cnn conv2d_backprop_input (same shapes)", ours["conv_input"], theirs.get("conv_input"),
           unit="ms/step")
    report("cnn 28x28 batch 64 forward (loss)", ours["forward"], theirs.get("forward"), unit="ms/step")
    report("cnn 28x28 batch 64 SGD train step", ours["train_step"], theirs.get("train_step"), unit="ms/step")
    torch = run_in(torch_python(), TORCH_BODY)
    if torch:
        print(f"pytorch {torch['version']}, {torch['threads']} threads (serial_step: 1):", flush=True)
        for key in ("forward", "train_step", "serial_step"):
            print(f"  pytorch {key:<34s} {torch[key] * 1e3:10.2f} ms/step   tensorweave/pytorch "
                  f"{ours[key] / torch[key]:6.3f}", flush=True)
    else:
        print("pytorch not importable in any reference interpreter (set TENSORWEAVE_TORCH_PYTHON): "
              "no PyTorch figures", flush=True)
    report("cnn SGD train step, one thread", ours["serial_step"], theirs.get("serial_step"), unit="ms/step")
    print_by_type("train step by op type (median ms per step, summed over the type's nodes):",
                  ours["by_type"], theirs.get("by_type", {}))
    print_by_type("the same, one inter-op and one intra-op thread (each kernel's own time):",
                  ours["serial_by_type"], theirs.get("serial_by_type", {}))


def print_by_type(title: str, ours: dict, theirs_types: dict) -> None:
    print(title, flush=True)
    for kind, secs in sorted(ours.items(), key=lambda item: -item[1]):
        if secs < 5e-5 and theirs_types.get(kind, 0.0) < 5e-5:
            continue
        tf_ms = f"{theirs_types[kind] * 1e3:8.2f}" if kind in theirs_types else "       -"
        print(f"  {kind:<28s} tensorweave {secs * 1e3:8.2f}   tensorflow {tf_ms}", flush=True)
    for kind in sorted(set(theirs_types) - set(ours)):
        if theirs_types[kind] >= 5e-5:
            print(f"  {kind:<28s} tensorweave        -   tensorflow {theirs_types[kind] * 1e3:8.2f}", flush=True)


if __name__ == "__main__":
    main()
