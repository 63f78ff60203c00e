"""Eager dispatch benchmark (issue 18): time per eager op for a small add and a 64x64 matmul,
a 100-op Python loop, and a GradientTape step, side by side with TensorFlow 2.21 eager and
PyTorch (each in its own interpreter, when importable) in the same run.

Goal: per-op time at most PyTorch's. A second table times graph construction (ops added to a
graph per second), which the eager check on the op-creation path must not slow down."""
from __future__ import annotations


import common  # noqa: F401  (sets sys.path)
from common import report, run_in, tf_python, time_per_step, torch_python
from eager_workloads import workloads

import numpy as np

import tensorweave as tf
from tensorweave.eager import context

WORKLOADS = ("add_2", "matmul_64", "loop_100_ops", "tape_mlp_step")

TF_BODY = """
import tensorflow as tf
from eager_workloads import workloads
result = {name: time_per_step(step) for name, step in workloads(tf).items()}
"""

TORCH_BODY = """
import torch
torch.set_num_threads(1)
a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
m = torch.ones(64, 64)
x0 = torch.tensor([0.5, 0.25])
w = (torch.ones(16, 16) * 0.01).requires_grad_()
inp = torch.ones(8, 16)

def loop():
    x = x0
    for _ in range(50):
        x = torch.add(torch.mul(x, 1.01), 0.1)
    return x

def tape_step():
    loss = torch.tanh(inp @ w).sum()
    return torch.autograd.grad(loss, w)

result = {"add_2": time_per_step(lambda: torch.add(a, b)),
          "matmul_64": time_per_step(lambda: torch.matmul(m, m)),
          "loop_100_ops": time_per_step(loop),
          "tape_mlp_step": time_per_step(tape_step)}
"""


def measure_eager() -> dict:
    with context.eager_mode():
        steps = workloads(tf)
        np.testing.assert_allclose(steps["loop_100_ops"]().numpy(), _numpy_loop(), rtol=1e-5)
        return {name: time_per_step(step) for name, step in steps.items()}


def _numpy_loop() -> np.ndarray:
    x = np.array([0.5, 0.25], np.float32)
    for _ in range(50):
        x = x * np.float32(1.01) + np.float32(0.1)
    return x


def measure_graph_construction() -> float:
    """Seconds per op added to a graph (AddV2 of a tensor and a Python constant: two ops)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.zeros([4])

        def build() -> None:
            tf.add(x, 1.0)

        return time_per_step(build) / 2


def main() -> None:
    ours = measure_eager()
    theirs = run_in(tf_python(), TF_BODY)
    torch = run_in(torch_python(), TORCH_BODY)
    for name in WORKLOADS:
        report(f"eager {name}", ours[name], theirs[name] if theirs else None, "us/op" if name in (
            "add_2", "matmul_64") else "us/call")
        if torch is not None:
            print(f"{'':<44s} pytorch     {torch[name] * 1e6:10.2f}   ratio to pytorch {ours[name] / torch[name]:6.3f}")
    if torch is None:
        print("pytorch: not importable in any reference interpreter (set TENSORWEAVE_TORCH_PYTHON): no ratio")
    print(f"{'graph construction':<44s} tensorweave {measure_graph_construction() * 1e6:10.2f} us/op")


if __name__ == "__main__":
    main()
