"""One task of the main job on a cluster: between-graph replication with asynchronous SGD, as
TF1's distributed trainers were written (white paper 3.3, OSDI 4.3).

Every worker process builds the whole model under `tf.train.replica_device_setter`, so the
variables live on the PS tasks (round robin) and the computation on the worker itself, and trains
with `tf.train.MonitoredTrainingSession` on its own server's master until the shared global step
reaches `--steps`. Worker 0 (or the `chief` job's task) is the chief: it initializes the
variables, writes checkpoints and summaries to --logdir, shows the progress bar and reports the
test accuracy at the end. A PS task only serves (`tensorweave server`'s loop)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Optional

from tqdm import tqdm

import tensorweave as tf
from tensorweave.distributed.cluster_resolver import TFConfigClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.examples import datasets
from tensorweave.tools import server as server_command

Task = tuple[ClusterSpec, str, int]
Build = Callable[[argparse.Namespace, datasets.DataSet], dict]  # builds the model in the default graph
_TRAINING_JOBS = ("chief", "worker")
# How long a non-chief worker waits for the chief to initialize the model before giving up.
_WAIT_FOR_CHIEF_SECS = 300.0


def resolve(args: argparse.Namespace) -> Optional[Task]:
    """The cluster task this process runs (--cluster JSON, --job, --task, the rest from
    TF_CONFIG), or None for the local job (no --cluster and no cluster in TF_CONFIG)."""
    if args.cluster is None and args.job is None and args.task is None \
            and not TFConfigClusterResolver().cluster_spec().jobs:
        return None
    cluster, job, task = server_command.resolve_task(args.cluster, args.job, args.task)
    if "ps" not in cluster.jobs:
        raise ValueError("the main job on a cluster keeps its variables on a \"ps\" job; the cluster has "
                         f"only {', '.join(cluster.jobs)}")
    if job != "ps" and job not in _TRAINING_JOBS:
        raise ValueError(f"the main job runs \"ps\", \"worker\" or \"chief\" tasks, not {job!r}")
    return cluster, job, task


def is_chief(cluster: ClusterSpec, job: str, task: int) -> bool:
    """TF's convention: the "chief" job's task if there is one, else worker 0."""
    return job == "chief" or (job == "worker" and task == 0 and "chief" not in cluster.jobs)


def _wait_for_chief(target: str, config: Any, ready_op: Any) -> None:
    """Waits until the chief has initialized every variable. MonitoredTrainingSession would wait
    too, but polls every 30 s (TF's SessionManager default), longer than a small job runs."""
    deadline = time.monotonic() + _WAIT_FOR_CHIEF_SECS
    with tf.Session(target, config=config) as sess:
        while len(sess.run(ready_op)):
            if time.monotonic() > deadline:
                raise tf.errors.DeadlineExceededError(
                    None, None, f"The chief did not initialize the model within {_WAIT_FOR_CHIEF_SECS:g} s")
            time.sleep(0.1)


def serve(cluster: ClusterSpec, job: str, task: int) -> None:
    """A PS task: serves until SIGTERM/SIGINT (or its server is stopped)."""
    server_command.serve(cluster, job, task)


def train(args: argparse.Namespace, data: datasets.DataSet, build: Build, cluster: ClusterSpec, job: str,
          task: int) -> Optional[float]:
    """Trains as this worker task; the chief returns the test accuracy, the other workers None."""
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    try:
        return _train_worker(args, data, build, server, cluster, job, task)
    finally:
        server.stop()


def _train_worker(args: argparse.Namespace, data: datasets.DataSet, build: Build, server: Any,
                  cluster: ClusterSpec, job: str, task: int) -> Optional[float]:
    chief = is_chief(cluster, job, task)
    worker_device = f"/job:{job}/task:{task}"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()  # the model's optimizer increments it
        model = build(args, data)
    ready_op = tf.report_uninitialized_variables()
    # This worker's steps involve only the PS tasks and itself: another worker that has finished
    # (and stopped its server) is none of its business, as in TF's between-graph examples.
    config = tf.ConfigProto(device_filters=["/job:ps", worker_device])
    if not chief:
        _wait_for_chief(server.target, config, ready_op)
    x, y = model["x"], model["y"]
    workers = sum(cluster.num_tasks(name) for name in _TRAINING_JOBS if name in cluster.jobs)
    # Each worker draws its own batch sequence (asynchronous SGD over different minibatches).
    batch_seed = args.seed + 1 + task + (0 if job == "worker" else 100_000)
    batches = datasets.BatchIterator(data.train_images, data.train_labels, args.batch_size, batch_seed)
    progress = tqdm(total=args.steps, desc=f"training ({workers} workers)", unit="step",
                    disable=args.quiet or not chief, file=sys.stdout, mininterval=0.2)
    local_steps, running = 0, None
    logdir = args.logdir if chief and args.logdir else None
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=chief, checkpoint_dir=logdir, config=config,
            hooks=[tf.train.StopAtStepHook(last_step=args.steps)],
            save_summaries_steps=args.summary_every, log_step_count_steps=None) as sess:
        while not sess.should_stop():
            images, labels = batches.next()
            _, loss, step = sess.run([model["train_op"], model["loss"], global_step],
                                     {x: images, y: datasets.one_hot(labels)})
            local_steps += 1
            running = loss if running is None else 0.95 * running + 0.05 * loss
            progress.update(max(0, min(int(step), args.steps) - progress.n))
            if local_steps % 20 == 0:
                progress.set_postfix(loss=f"{running:.4f}", refresh=False)
    # Stopped by StopAtStepHook: the target step was reached, maybe by the other worker's
    # last step, which this worker's fetches never saw.
    progress.update(max(0, args.steps - progress.n))
    progress.close()
    print(f"{worker_device}: {local_steps} of the {args.steps} steps", flush=True)
    if not chief:
        return None
    # The variables outlive the monitored session on the PS tasks: a plain session reads them.
    with tf.Session(server.target, config=config) as sess:
        return float(sess.run(model["accuracy"], {x: data.test_images, y: datasets.one_hot(data.test_labels)}))
