"""Input-pipeline benchmark (issue 5): records per second through queues and readers.

Workloads, each run the same way under TensorFlow in the same run (ratio = tensorweave time /
TensorFlow time per record; below 1 means tensorweave is faster):
  1. FIFOQueue step overhead: one `enqueue` step and one `dequeue` step per record, from the
     main thread (the queue never blocks). Goal: within 1.5x of TensorFlow.
  2. FIFOQueue fed by a QueueRunner thread (enqueue_many of 100 records) while the main thread
     runs dequeue_many(100).
  3. CSV files -> string_input_producer -> TextLineReader -> decode_csv -> shuffle_batch
     (2 reader threads, batch 100), measured in steady state over repeated epochs.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time

import common  # noqa: F401  (sets sys.path)
from common import report, run_tf, time_per_step

import tensorweave as tf

N_FILES, LINES_PER_FILE, BATCH = 4, 2500, 100
WARMUP_BATCHES, TIMED_BATCHES = 20, 200

# Shared by both runs: written for tensorweave, and for TensorFlow's subprocess via exec.
WORKLOADS = '''
def fifo_step_time(tf):
    q = tf.FIFOQueue(1000, [tf.float32], shapes=[[]])
    enq = q.enqueue([tf.constant(1.0)])
    deq = q.dequeue()
    sess = tf.Session()

    def one_record():
        sess.run(enq)
        sess.run(deq)

    seconds = time_per_step(one_record)
    sess.close()
    return seconds


def fifo_runner_time(tf, batch, warmup, timed):
    q = tf.FIFOQueue(10 * batch, [tf.float32], shapes=[[]])
    enq = q.enqueue_many([tf.range(batch, dtype=tf.float32)])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [enq]))
    deq = q.dequeue_many(batch)
    return drain_time(tf, deq, batch, warmup, timed)


def csv_pipeline_time(tf, files, batch, warmup, timed):
    names = tf.train.string_input_producer(files, shuffle=True, seed=1)
    _, line = tf.TextLineReader().read(names)
    a, b, c = tf.decode_csv(line, record_defaults=[[0], [0.0], [""]])
    batched = tf.train.shuffle_batch([a, b, c], batch_size=batch, capacity=20 * batch,
                                     min_after_dequeue=5 * batch, num_threads=2, seed=2)
    return drain_time(tf, batched, batch, warmup, timed)


def drain_time(tf, fetch, batch, warmup, timed):
    """Seconds per record over `timed` batches, after `warmup` batches."""
    sess = tf.Session()
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord=coord)
    for _ in range(warmup):
        sess.run(fetch)
    start = time.perf_counter()
    for _ in range(timed):
        sess.run(fetch)
    seconds = (time.perf_counter() - start) / (timed * batch)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=30)
    sess.close()
    return seconds
'''

TF_BODY = """
import time
exec({workloads!r})
files = {files!r}
result = {{
    "fifo_step": fifo_step_time(tf),
    "fifo_runner": fifo_runner_time(tf, {batch}, {warmup}, {timed}),
    "csv_pipeline": csv_pipeline_time(tf, files, {batch}, {warmup}, {timed}),
}}
"""


def write_csv_files(directory: str) -> list[str]:
    files = []
    for f in range(N_FILES):
        path = os.path.join(directory, f"part-{f:02d}.csv")
        with open(path, "w") as out:
            for r in range(LINES_PER_FILE):
                i = f * LINES_PER_FILE + r
                out.write(f"{i},{i * 0.5},label{i % 7}\n")
        files.append(path)
    return files


def main() -> None:
    namespace = {"time": time, "time_per_step": time_per_step}
    exec(WORKLOADS, namespace)  # noqa: S102  (our own workload definitions)
    directory = tempfile.mkdtemp(prefix="tw_input_bench_")
    try:
        files = write_csv_files(directory)
        ours = {"fifo_step": namespace["fifo_step_time"](tf)}
        tf.reset_default_graph()
        ours["fifo_runner"] = namespace["fifo_runner_time"](tf, BATCH, WARMUP_BATCHES, TIMED_BATCHES)
        tf.reset_default_graph()
        ours["csv_pipeline"] = namespace["csv_pipeline_time"](tf, files, BATCH, WARMUP_BATCHES,
                                                              TIMED_BATCHES)
        theirs = run_tf(TF_BODY.format(workloads=WORKLOADS, files=files, batch=BATCH,
                                       warmup=WARMUP_BATCHES, timed=TIMED_BATCHES)) or {}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    labels = (("fifo_step", "FIFOQueue enqueue+dequeue steps"),
              ("fifo_runner", f"FIFOQueue runner, dequeue_many({BATCH})"),
              ("csv_pipeline", "TextLineReader->decode_csv->shuffle_batch"))
    for key, label in labels:
        report(label, ours[key], theirs.get(key), unit="us/record")
        print(f"{'':44s} tensorweave {1.0 / ours[key]:10.0f} records/s", flush=True)


if __name__ == "__main__":
    main()
