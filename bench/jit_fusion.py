"""JIT fusion benchmark (issue 17, "JIT compilation"): the walkthrough's two examples, GELU
written by hand (0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))) and x*x*x*x, on 1M and 16M float32
elements held in a variable, per step fetching the sum of the result (the sum is outside the
jit scope, so XLA cannot drop any element's work, and nothing large is fetched):
- tensorweave unfused (one kernel per op) and JIT-compiled (tf.xla.experimental.jit_scope: one
  numba kernel), steady state (after the first step compiled or loaded the kernel);
- TensorFlow 2.21 in graph mode, unfused and with the same jit_scope (XLA on the CPU), in the
  same run.
Goal: jit at most 0.7x tensorweave's unfused time."""
from __future__ import annotations

import math
import time

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import run_tf, time_per_step

import tensorweave as tf

SIZES = (1 << 20, 1 << 24)

BUILD = """
def gelu(x):
    return 0.5 * x * (1.0 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


def x4(x):
    return x * x * x * x


def steps(size, rounds=5):
    out = {}
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable((np.random.RandomState(0).rand(size).astype(np.float32) - 0.5) * 8)
        fetches = {}
        for name, fn in (("gelu", gelu), ("x4", x4)):
            fetches[(name, "unfused")] = tf.reduce_sum(fn(v))
            with tf.xla.experimental.jit_scope():
                y = fn(v)
            fetches[(name, "jit")] = tf.reduce_sum(y)  # outside the scope: in neither cluster
        sess = tf.Session(graph=graph)
        sess.run(v.initializer)
        for t in fetches.values():
            sess.run(t)  # compiles
        # unfused and jit alternate, best round of each: the machine is shared
        for _ in range(rounds):
            for (name, mode), t in fetches.items():
                key = f"{name}/{size}/{mode}"
                took = time_per_step(lambda: sess.run(t), min_time=MIN_TIME, warmup=2, repeats=3)
                out[key] = min(out.get(key, took), took)
                # CPU seconds a step (all threads): less sensitive to other processes' load
                n = max(2, int(MIN_TIME / max(took, 1e-4)))
                c0 = time.process_time()
                for _ in range(n):
                    sess.run(t)
                cpu = (time.process_time() - c0) / n
                out["cpu/" + key] = min(out.get("cpu/" + key, cpu), cpu)
        sess.close()
    return out
"""

TF_BODY = "import math\nimport time\nimport numpy as np\nMIN_TIME = 0.3\n" + BUILD + """
result = {}
for size in SIZES:
    result.update(steps(size))
"""


def main() -> None:
    scope: dict = {"tf": tf, "np": np, "math": math, "time": time, "time_per_step": time_per_step, "MIN_TIME": 0.3}
    exec(BUILD, scope)  # the same program as TF's twin
    ours: dict = {}
    for size in SIZES:
        ours.update(scope["steps"](size))
    theirs = run_tf(f"SIZES = {SIZES!r}\n" + TF_BODY) or {}
    print(f"{'workload':<12s} {'tw unfused':>11s} {'tw jit':>9s} {'jit/unfused':>11s} {'tf unfused':>11s} "
          f"{'tf xla':>9s} {'tw jit/tf xla':>13s}   (ms/step; cpu: CPU ms/step, all threads)")
    for name in ("gelu", "x4"):
        for size in SIZES:
            for prefix in ("", "cpu/"):
                key = f"{prefix}{name}/{size}"
                u, j = ours[f"{key}/unfused"], ours[f"{key}/jit"]
                tu, tj = theirs.get(f"{key}/unfused"), theirs.get(f"{key}/jit")
                label = f"{name} {size >> 20}M" + (" cpu" if prefix else "")
                line = f"{label:<12s} {u * 1e3:11.3f} {j * 1e3:9.3f} {j / u:11.3f}"
                if tu is not None and tj is not None:
                    line += f" {tu * 1e3:11.3f} {tj * 1e3:9.3f} {j / tj:13.2f}"
                else:
                    line += "   (tensorflow not importable)"
                print(line, flush=True)


if __name__ == "__main__":
    main()
