"""Crash safety (DESIGN.md "Files and formats"): a training process killed by SIGKILL at random
moments, several times mid-save of a large variable, always leaves `latest_checkpoint` naming a
complete checkpoint whose variables all come from one saved generation, and the next run resumes
from it. Both with a fresh prefix per save (global_step) and with one prefix saved over and over."""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensorweave as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIG = 2_000_000  # float32 elements (8 MB): a save takes long enough to be killed inside it

CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorweave as tf

    ckpt_dir, mode, big = sys.argv[1], sys.argv[2], int(sys.argv[3])

    def values(g):
        return [np.full(big, g, np.float32), np.arange(10.0) + g, np.int64(g),
                np.array([b"gen%d" % g, b"x" * (g % 5)], dtype=object)]

    variables = [tf.Variable(v, name="v%d" % i) for i, v in enumerate(values(0))]
    feeds = [tf.placeholder(v.dtype.base_dtype, v.shape) for v in variables]
    assigns = [v.assign(f) for v, f in zip(variables, feeds)]
    saver = tf.train.Saver(max_to_keep=3)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        latest = tf.train.latest_checkpoint(ckpt_dir)
        g = 0
        if latest:
            saver.restore(sess, latest)
            got = sess.run(variables)
            g = int(got[2])
            for have, want in zip(got, values(g)):
                if not np.array_equal(have, want):
                    print("INCONSISTENT", g, flush=True)
                    sys.exit(3)
        print("START", g, flush=True)
        while True:
            g += 1
            sess.run(assigns, dict(zip(feeds, values(g))))
            print("BEGIN", g, flush=True)
            saver.save(sess, ckpt_dir + "/model.ckpt", global_step=g if mode == "step" else None,
                       write_meta_graph=g % 2 == 0)
            print("END", g, flush=True)
""")


def _generation_of(prefix):
    """The one generation all tensors of checkpoint `prefix` come from (fails otherwise)."""
    reader = tf.train.NewCheckpointReader(prefix)
    g = int(reader.get_tensor("v2"))
    np.testing.assert_array_equal(reader.get_tensor("v0"), np.full(BIG, g, np.float32))
    np.testing.assert_array_equal(reader.get_tensor("v1"), np.arange(10.0) + g)
    assert reader.get_tensor("v3").tolist() == [b"gen%d" % g, b"x" * (g % 5)]
    return g


def _run_and_kill(ckpt_dir, mode, rng, inside_save):
    """Starts a training process, kills it with SIGKILL during (or around) a save; returns the
    generations it began and finished saving, and the generation it resumed from."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-c", CHILD, ckpt_dir, mode, str(BIG)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    began = finished = start = None
    target = rng.randint(2, 4)
    durations, begin_time = [], None
    try:
        for line in proc.stdout:
            kind, g = line.split()[0], int(line.split()[1])
            if kind == "START":
                start = g
            elif kind == "BEGIN":
                began, begin_time = g, time.monotonic()
                if g - start >= target:
                    # The shortest save so far has no meta graph: mostly writing the 8 MB tensor.
                    shortest = min(durations)
                    delay = rng.uniform(0.1, 0.7) * shortest if inside_save else rng.uniform(0, 3 * shortest)
                    time.sleep(delay)
                    break
            elif kind == "END":
                finished = g
                durations.append(time.monotonic() - begin_time)
            else:
                pytest.fail(f"child reported {line!r}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        rest = proc.stdout.read()  # what it printed while we waited to kill it
        stderr = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    for line in rest.splitlines():
        kind, g = line.split()[0], int(line.split()[1])
        if kind == "BEGIN":
            began = g
        elif kind == "END":
            finished = g
    assert proc.returncode == -signal.SIGKILL, f"child exited by itself ({proc.returncode}): {stderr[-2000:]}"
    assert start is not None and began is not None, stderr[-2000:]
    return start, began, finished


@pytest.mark.parametrize("mode,kills", [("step", 4), ("same", 2)])
def test_killed_saves_leave_a_complete_consistent_checkpoint(tmp_path, mode, kills):
    rng = random.Random(1234 + kills)
    ckpt_dir = str(tmp_path)
    restored_from = 0
    interrupted_saves = 0
    for trial in range(kills):
        start, began, finished = _run_and_kill(ckpt_dir, mode, rng, inside_save=trial % 2 == 0)
        assert start == restored_from  # the run resumed from what the previous check restored
        in_flight = [f for f in os.listdir(ckpt_dir) if ".tempstate" in f or f.endswith(".pending")]
        interrupted_saves += bool(in_flight) and began != finished
        latest = tf.train.latest_checkpoint(ckpt_dir)
        assert latest is not None
        g = _generation_of(latest)
        # Either the save in progress had committed and named itself in the state file, or
        # the state file still names the last finished save.
        assert g in (finished, began), (g, finished, began)
        restored_from = g
        leftovers = [f for f in os.listdir(ckpt_dir) if ".tempstate" in f]
        assert len(leftovers) <= 2, leftovers  # a killed save's temporaries are cleared later
        state = tf.train.get_checkpoint_state(ckpt_dir)
        for path in state.all_model_checkpoint_paths:
            assert tf.train.checkpoint_exists(path)
        if mode == "step":
            for path in state.all_model_checkpoint_paths:
                _generation_of(path)  # every checkpoint the state file lists is complete too
    assert interrupted_saves >= 1  # at least one kill landed inside a save, leaving its files
