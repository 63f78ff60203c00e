"""Synchronous training with backup workers (issue 14; OSDI 4.4, Figure 8 in miniature).

A parameter server and worker processes on loopback train a small model (batch 64, 256-256-10,
relu, softmax cross-entropy) with tf.train.SyncReplicasOptimizer under MonitoredTrainingSession.
Step time is the chief's wall time per global step over the measured steps. Configurations:
- 2 workers + 1 backup (replicas_to_aggregate=2 of 3), no straggler;
- the same with a straggler: worker 2 sleeps --delay seconds before each of its steps;
- 2 of 2 workers (no backup), without and with the same straggler.
Each configuration runs under tensorweave and, when TensorFlow is found, under TensorFlow in the
same run (the same script, with `import tensorflow.compat.v1 as tf`).
Goals: at most 1.0x TensorFlow's step time; with a straggler and a backup, within 1.2x of the
straggler-free step.
Usage: python bench/sync_replicas.py [--steps N] [--delay SECONDS]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _import(lib: str):  # type: ignore[no-untyped-def]
    if lib == "tensorflow":
        import tensorflow.compat.v1 as tf  # noqa: PLC0415  (the TF twin runs in its own interpreter)
        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        return tf
    import tensorweave as tf  # noqa: PLC0415
    return tf


def run_ps(lib: str, cluster: dict) -> None:
    tf = _import(lib)
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="ps", task_index=0)
    print("serving", flush=True)
    server.join()


def run_worker(lib: str, cluster: dict, task: int, m: int, steps: int, warmup: int, delay: float) -> None:
    import numpy as np  # noqa: PLC0415

    tf = _import(lib)
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=task)
    rng = np.random.RandomState(task)
    xs = rng.randn(64, 256).astype(np.float32)
    labels = rng.randint(0, 10, 64).astype(np.int64)
    with tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{task}",
                                                  cluster=tf.train.ClusterSpec(cluster))):
        x = tf.placeholder(tf.float32, [None, 256])
        y = tf.placeholder(tf.int64, [None])
        w1 = tf.get_variable("w1", [256, 256], initializer=tf.glorot_uniform_initializer(seed=1))
        b1 = tf.get_variable("b1", [256], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("w2", [256, 10], initializer=tf.glorot_uniform_initializer(seed=2))
        b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.01), replicas_to_aggregate=m,
                                             total_num_replicas=len(cluster["worker"]))
        train = opt.minimize(loss, global_step=global_step)
    is_chief = task == 0
    hooks = [opt.make_session_run_hook(is_chief)]
    if is_chief:  # the others train until they are killed: the chief's last steps need their gradients
        hooks.append(tf.train.StopAtStepHook(last_step=warmup + steps))
    feed = {x: xs, y: labels}
    # Each worker's session sees only the PS and itself (TF's session would otherwise wait for
    # every worker of the cluster to answer).
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"])
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks, config=config,
                                           save_checkpoint_secs=None, save_summaries_steps=None,
                                           save_summaries_secs=None, log_step_count_steps=None,
                                           stop_grace_period_secs=1) as sess:
        print("ready", flush=True)
        start: Optional[tuple] = None
        while not sess.should_stop():
            if delay:
                time.sleep(delay)
            step = sess.run([train, global_step], feed)[1]
            if start is None and step >= warmup:
                start = (time.perf_counter(), step)
        end = (time.perf_counter(), warmup + steps)
    if is_chief and start is not None:
        print(json.dumps({"step_time": (end[0] - start[0]) / max(1, end[1] - start[1])}), flush=True)
    os._exit(0)  # the other workers may be left waiting for a token: nothing more to do here


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(python: str, env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([python, os.path.abspath(__file__), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=ROOT, text=True)


def _wait_for(process: subprocess.Popen, text: str, timeout: float = 120.0) -> str:
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if text in line:
            return line
        if not line and process.poll() is not None:
            raise RuntimeError(f"a task exited with {process.returncode} before printing {text!r}")
    raise TimeoutError(text)


def measure(lib: str, python: str, workers: int, m: int, steps: int, warmup: int, delay: float) -> float:
    """The chief's seconds per global step with `workers` workers aggregating `m`, worker 2
    (when there is one) delayed by `delay`, else the last worker."""
    env = dict(os.environ)
    if lib == "tensorflow":
        env.pop("PYTHONPATH", None)
        env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    else:
        env["PYTHONPATH"] = ROOT
    cluster = {"ps": [f"127.0.0.1:{_free_port()}"], "worker": [f"127.0.0.1:{_free_port()}" for _ in range(workers)]}
    spec = json.dumps(cluster)
    processes = [_spawn(python, env, "ps", lib, spec)]
    try:
        _wait_for(processes[0], "serving")
        common = [str(m), str(steps), str(warmup)]
        processes.append(_spawn(python, env, "worker", lib, spec, "0", *common, "0"))
        _wait_for(processes[1], "ready")
        for task in range(1, workers):
            slow = delay if task == workers - 1 else 0.0
            processes.append(_spawn(python, env, "worker", lib, spec, str(task), *common, str(slow)))
        line = _wait_for(processes[1], "step_time", timeout=600)
        return float(json.loads(line)["step_time"])
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def _tf_python() -> Optional[str]:
    sys.path.insert(0, HERE)
    from common import tf_python  # noqa: PLC0415

    return tf_python()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("ps", "worker"):
        role, lib, cluster = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
        if role == "ps":
            run_ps(lib, cluster)
        else:
            task, m, steps, warmup, delay = sys.argv[4:9]
            run_worker(lib, cluster, int(task), int(m), int(steps), int(warmup), float(delay))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.1)
    args = parser.parse_args()
    tf_py = _tf_python()
    configs = [("2 of 3 workers (1 backup), no straggler", 3, 2, 0.0),
               (f"2 of 3 workers (1 backup), straggler +{args.delay * 1e3:.0f} ms/step", 3, 2, args.delay),
               ("2 of 2 workers (no backup), no straggler", 2, 2, 0.0),
               (f"2 of 2 workers (no backup), straggler +{args.delay * 1e3:.0f} ms/step", 2, 2, args.delay)]
    results: dict = {}
    for label, workers, m, delay in configs:
        ours = measure("tensorweave", sys.executable, workers, m, args.steps, args.warmup, delay)
        theirs = measure("tensorflow", tf_py, workers, m, args.steps, args.warmup, delay) if tf_py else None
        results[label] = (ours, theirs)
        ratio = f"{ours / theirs:.2f}x" if theirs else "n/a"
        theirs_text = f"{theirs * 1e3:8.2f} ms" if theirs else "       n/a"
        print(f"{label:<48} tensorweave {ours * 1e3:8.2f} ms   TensorFlow {theirs_text}   ratio {ratio}", flush=True)
    base, straggled = results[configs[0][0]][0], results[configs[1][0]][0]
    print(f"tensorweave with a straggler and a backup: {straggled / base:.2f}x the straggler-free step")
    if tf_py:
        tf_base, tf_straggled = results[configs[0][0]][1], results[configs[1][0]][1]
        print(f"TensorFlow with a straggler and a backup:  {tf_straggled / tf_base:.2f}x the straggler-free step")


if __name__ == "__main__":
    main()
