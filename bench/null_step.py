"""Null-step benchmark (issue: "Session.run of a trivial graph").

Workloads on one session: fetch (scalar variable read + constant), run an assign_add on a scalar
variable, and both in one step. Goal: >= 50,000 steps/s and <= 0.25x TensorFlow's step time."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
from common import report, run_tf, time_per_step

import tensorweave as tf

TF_BODY = """
def measure():
    v = tf.Variable(1.0)
    w = tf.Variable(0.0)
    y = v + 2.0
    inc = tf.assign_add(w, 1.0)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    out = {}
    out["read_plus_const"] = time_per_step(lambda: sess.run(y))
    out["assign_add"] = time_per_step(lambda: sess.run(inc.op))
    out["both"] = time_per_step(lambda: sess.run([y, inc.op]))
    return out
result = measure()
"""


def main() -> None:
    v = tf.Variable(1.0)
    w = tf.Variable(0.0)
    y = v + 2.0
    inc = tf.assign_add(w, 1.0)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    assert sess.run(y) == 3.0
    ours = {
        "read_plus_const": time_per_step(lambda: sess.run(y)),
        "assign_add": time_per_step(lambda: sess.run(inc.op)),
        "both": time_per_step(lambda: sess.run([y, inc.op])),
    }
    theirs = run_tf(TF_BODY) or {}
    for key, label in (("read_plus_const", "run(v + 2.0)"), ("assign_add", "run(assign_add)"),
                       ("both", "run([v + 2.0, assign_add])")):
        report(f"null step {label}", ours[key], theirs.get(key))
        print(f"{'':44s} tensorweave {1.0 / ours[key]:10.0f} steps/s")


if __name__ == "__main__":
    main()
