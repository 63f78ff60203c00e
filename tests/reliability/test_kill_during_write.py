"""Crash safety beyond Saver.save (tests/training/test_checkpoint_crash.py): a process killed
with SIGKILL while it writes a meta graph (`tf.train.export_meta_graph`) or TFRecord files.

- A meta graph file is replaced atomically: after the kill, the file holds one whole exported
  generation (the last finished one, or the one in flight if it had reached its rename).
- A TFRecord file keeps every record that was flushed before the kill (plain, ZLIB and GZIP):
  the reader returns them in order, then either ends or raises DataLossError on the cut tail.

Real subprocesses, killed by pid, each run bounded in time."""
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
BIG = 1_000_000  # float32 elements in the exported graph's constant: an export takes ~10 ms or more
RUN_TIMEOUT_S = 60

META_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import tensorweave as tf

    path, big = sys.argv[1], int(sys.argv[2])
    tf.constant(np.arange(big, dtype=np.float32), name="big")
    graph = tf.get_default_graph()
    print("START 0", flush=True)
    g = 0
    while True:
        g += 1
        graph.clear_collection("generation")
        graph.add_to_collection("generation", g)
        print("BEGIN", g, flush=True)
        tf.train.export_meta_graph(filename=path)
        print("END", g, flush=True)
""")

RECORD_CHILD = textwrap.dedent("""
    import sys, time
    import tensorweave as tf

    path, compression = sys.argv[1], sys.argv[2] or None
    writer = tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression))
    print("START 0", flush=True)
    for i in range(200_000):
        writer.write(b"%08d" % i * (1 + i % 37 + (3000 if i % 10 == 9 else 0)))
        if i % 7 == 6:
            writer.flush()
            print("FLUSHED", i + 1, flush=True)
    print("DONE 0", flush=True)
    time.sleep(600)  # killed here at the latest
""")


def _record(i):
    # every tenth record is 24 KB: larger than the file buffer, so unflushed records reach the
    # file partly and the kill leaves a torn tail
    return b"%08d" % i * (1 + i % 37 + (3000 if i % 10 == 9 else 0))


def _run_and_kill(script, args, on_line):
    """Runs `script` with `args`; `on_line(kind, value)` returns a delay in seconds after which
    the child is killed by pid with SIGKILL (None: keep reading). Returns every (kind, value)
    line the child printed, the ones printed before the kill landed included."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        for line in proc.stdout:
            kind, value = line.split()[0], int(line.split()[1])
            lines.append((kind, value))
            delay = on_line(kind, value)
            if delay is not None or time.monotonic() > deadline:
                time.sleep(delay or 0)
                break
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=RUN_TIMEOUT_S)
        rest, stderr = proc.stdout.read(), proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    # (the last line may be cut short by the kill)
    lines += [(line.split()[0], int(line.split()[1])) for line in rest.splitlines() if len(line.split()) == 2]
    assert proc.returncode == -signal.SIGKILL, f"child exited by itself ({proc.returncode}): {stderr[-2000:]}"
    return lines


def test_kill_during_export_meta_graph_leaves_one_whole_generation(tmp_path):
    rng = random.Random(10)
    path = str(tmp_path / "model.meta")
    for trial in range(3):
        durations, began = [], {}

        def on_line(kind, g):
            if kind == "BEGIN":
                began[g] = time.monotonic()
                if len(durations) >= 3:
                    return rng.uniform(0.0, 1.2) * min(durations)  # mostly inside the export
            elif kind == "END":
                durations.append(time.monotonic() - began[g])
            return None

        lines = _run_and_kill(META_CHILD, [path, str(BIG)], on_line)
        finished = max(g for kind, g in lines if kind == "END")
        in_flight = max(g for kind, g in lines if kind == "BEGIN")
        with tf.Graph().as_default() as graph:
            tf.train.import_meta_graph(path)
            assert graph.get_collection("generation")[0] in (finished, in_flight)
            with tf.Session() as sess:
                big = sess.run("big:0")
        np.testing.assert_array_equal(big, np.arange(BIG, dtype=np.float32))
        assert not [f for f in os.listdir(tmp_path) if f.startswith("model.meta") and f != "model.meta"
                    and ".tempstate" not in f], os.listdir(tmp_path)


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_kill_during_tfrecord_writes_keeps_what_was_flushed(tmp_path, compression):
    rng = random.Random(f"kill-tfrecord-{compression}")
    path = str(tmp_path / "data.tfrecord")
    kill_after = rng.randint(50, 400)

    def on_line(kind, n):
        if kind == "FLUSHED" and n >= kill_after * 7:
            return rng.uniform(0, 0.002)  # while it writes the next records
        return None

    lines = _run_and_kill(RECORD_CHILD, [path, compression], on_line)
    flushed = max(n for kind, n in lines if kind == "FLUSHED")
    records = []
    try:
        for record in tf.python_io.tf_record_iterator(path, compression or None):
            records.append(record)
    except tf.errors.DataLossError as err:
        assert "truncated" in str(err) or "corrupted compressed stream" in str(err), err
    assert len(records) >= flushed, (len(records), flushed)
    assert records == [_record(i) for i in range(len(records))]
