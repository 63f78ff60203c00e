"""tf.data benchmark (issue 15): records per second through a dataset pipeline.

Workloads, each run the same way under TensorFlow in the same run (ratio = tensorweave time /
TensorFlow time per record; below 1 means tensorweave is faster):
  1. get_next step overhead: Dataset.range(...).repeat(), one element per Session.run.
  2. TFRecordDataset of raw records (16 float32 each, 4 files) -> map(decode_raw) ->
     shuffle(1000) -> batch(64) -> prefetch(2), repeated; one batch per Session.run, steady state.
     (decode_raw on raw records stands in for parse_single_example, built in another branch.)
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

import common  # noqa: F401  (sets sys.path)
from common import report, run_tf, time_per_step

import tensorweave as tf

N_FILES, RECORDS_PER_FILE, BATCH = 4, 2500, 64
WARMUP_BATCHES, TIMED_BATCHES = 20, 300

# Shared by both runs: written for tensorweave, and for TensorFlow's subprocess via exec.
WORKLOADS = '''
def get_next_time(tf):
    nxt = tf.data.Dataset.range(1000).repeat().make_one_shot_iterator().get_next()
    sess = tf.Session()
    seconds = time_per_step(lambda: sess.run(nxt))
    sess.close()
    return seconds


def tfrecord_pipeline_time(tf, files, batch, warmup, timed):
    ds = tf.data.TFRecordDataset(files).map(lambda r: tf.io.decode_raw(r, tf.float32)) \\
        .shuffle(1000, seed=1).repeat().batch(batch).prefetch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    sess = tf.Session()
    for _ in range(warmup):
        sess.run(nxt)
    start = time.perf_counter()
    for _ in range(timed):
        sess.run(nxt)
    seconds = (time.perf_counter() - start) / (timed * batch)
    sess.close()
    return seconds
'''

TF_BODY = """
import time
exec({workloads!r})
result = {{
    "get_next": get_next_time(tf),
    "tfrecord": tfrecord_pipeline_time(tf, {files!r}, {batch}, {warmup}, {timed}),
}}
"""


def write_records(directory: str) -> list[str]:
    files = []
    for f in range(N_FILES):
        path = os.path.join(directory, f"part-{f:02d}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as w:
            for r in range(RECORDS_PER_FILE):
                w.write(np.full(16, f * RECORDS_PER_FILE + r, np.float32).tobytes())
        files.append(path)
    return files


def main() -> None:
    namespace = {"time": time, "time_per_step": time_per_step}
    exec(WORKLOADS, namespace)  # noqa: S102  (our own workload definitions)
    directory = tempfile.mkdtemp(prefix="tw_data_bench_")
    try:
        files = write_records(directory)
        ours = {"get_next": namespace["get_next_time"](tf)}
        tf.reset_default_graph()
        ours["tfrecord"] = namespace["tfrecord_pipeline_time"](tf, files, BATCH, WARMUP_BATCHES, TIMED_BATCHES)
        theirs = run_tf(TF_BODY.format(workloads=WORKLOADS, files=files, batch=BATCH,
                                       warmup=WARMUP_BATCHES, timed=TIMED_BATCHES)) or {}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    report("get_next step (Dataset.range)", ours["get_next"], theirs.get("get_next"), unit="us/step")
    report("TFRecord->decode_raw->shuffle->batch(64)", ours["tfrecord"], theirs.get("tfrecord"),
           unit="us/record")
    print(f"{'':44s} tensorweave {1.0 / ours['tfrecord']:10.0f} records/s", flush=True)


if __name__ == "__main__":
    main()
