"""Checkpoint benchmark (issue 5): `Saver.save` and `Saver.restore` of 100 MB held in 200
float32 variables (125,000 elements each), with the ratio to TensorFlow in the same run.
Goal: no slower than TensorFlow. Each save goes to a fresh global step (as training does), so
the old checkpoints are deleted by max_to_keep as in a real job; the meta graph is not written."""
from __future__ import annotations

import shutil
import tempfile
import time

import common  # noqa: F401  (sets sys.path)
from common import report, run_tf

import numpy as np

import tensorweave as tf

NUM_VARS = 200
ELEMENTS = 125_000          # 200 x 125,000 x 4 bytes = 100 MB
ROUNDS = 5

TF_BODY = f"""
import shutil, tempfile, numpy as np
def measure():
    vs = [tf.Variable(np.full({ELEMENTS}, i, np.float32), name="v%d" % i) for i in range({NUM_VARS})]
    saver = tf.train.Saver(max_to_keep=2)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    d = tempfile.mkdtemp()
    saves, restores = [], []
    for k in range({ROUNDS} + 1):
        t = time.perf_counter()
        path = saver.save(sess, d + "/model.ckpt", global_step=k, write_meta_graph=False)
        saves.append(time.perf_counter() - t)
        t = time.perf_counter()
        saver.restore(sess, path)
        restores.append(time.perf_counter() - t)
    shutil.rmtree(d)
    return {{"save": min(saves[1:]), "restore": min(restores[1:])}}
result = measure()
"""


def measure() -> dict:
    variables = [tf.Variable(np.full(ELEMENTS, i, np.float32), name=f"v{i}") for i in range(NUM_VARS)]
    saver = tf.train.Saver(max_to_keep=2)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    directory = tempfile.mkdtemp()
    saves, restores = [], []
    try:
        for k in range(ROUNDS + 1):  # the first round builds the step plans: not timed
            t = time.perf_counter()
            path = saver.save(sess, f"{directory}/model.ckpt", global_step=k, write_meta_graph=False)
            saves.append(time.perf_counter() - t)
            t = time.perf_counter()
            saver.restore(sess, path)
            restores.append(time.perf_counter() - t)
        check = sess.run(variables[7])
        assert check.shape == (ELEMENTS,) and np.all(check == 7), "restored values are wrong"
    finally:
        shutil.rmtree(directory)
        sess.close()
    return {"save": min(saves[1:]), "restore": min(restores[1:])}


def main() -> None:
    ours = measure()
    theirs = run_tf(TF_BODY) or {}
    report("checkpoint save (100 MB, 200 variables)", ours["save"], theirs.get("save"), unit="ms")
    report("checkpoint restore (100 MB, 200 variables)", ours["restore"], theirs.get("restore"), unit="ms")


if __name__ == "__main__":
    main()
