"""Null training steps through the distributed runtime, OSDI Figure 7 on loopback (issue 13).

One worker and 0/1/2/4 PS tasks, each a separate process on 127.0.0.1 (bench/dist_task.py; with
no PS the variables live on the worker itself). The worker opens a session on its own server's
`grpc://` target and times steps of three null models:
- scalar: one scalar float32 variable per PS task, read on the worker, updated back by assign_add
  of a value the worker computed from their sum;
- dense: 100 MB of float32, one variable per PS task (100 MB / num_ps each), read on the worker,
  scaled there, added back: the model crosses the loopback once each way per step;
- sparse: a 256 MB [rows, 64] float32 embedding sharded over the PS tasks by id modulo the number
  of shards; 32 random ids fed each step; each shard gathers its rows on its own task, the worker
  scales them, and ScatterSub applies the update on the shard. Also with a 4x smaller embedding,
  to show the step does not depend on the embedding's size.
The same programs run under tensorweave and under TensorFlow (its own gRPC runtime, in the
TensorFlow interpreter that bench/common.py finds) in the same run; the table gives the median
of the repeats' mean step times and the ratio tensorweave / TensorFlow. Every process this driver
starts is killed by pid before it returns.

    python bench/dist_null_step.py                   # everything (a few minutes)
    python bench/dist_null_step.py --quick           # small models, few steps
    python bench/dist_null_step.py --variants scalar --ps 1,2 --systems tensorweave
"""
from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Optional

import common
import numpy as np
from common import tf_python

TASK = os.path.join(common.HERE, "dist_task.py")


class TaskError(RuntimeError):
    pass


def free_ports(n: int) -> list[int]:
    """Ports the kernel hands out for port 0, all held at once so that they differ."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _env(system: str) -> dict:
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("PYTHONPATH", None)
    if system == "tensorweave":
        env["PYTHONPATH"] = common.ROOT
    return env


def _read_line(proc: subprocess.Popen, prefix: bytes, deadline: float, buf: bytearray) -> bytes:
    """The first line of `proc`'s stdout starting with `prefix`, waiting until `deadline`."""
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    while True:
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            if line.startswith(prefix):
                return line
        left = deadline - time.monotonic()
        if left <= 0:
            raise TaskError(f"timed out waiting for {prefix.decode()} from pid {proc.pid}")
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise TaskError(f"pid {proc.pid} exited (rc {proc.wait(timeout=5)}) before {prefix.decode()}")
            buf.extend(chunk)


def _stop(procs: list[subprocess.Popen]) -> None:
    """Kills every process by pid, waiting a bounded time for each."""
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            sys.stderr.write(f"pid {p.pid} did not exit after SIGKILL\n")
        if p.stdout is not None:
            p.stdout.close()


def run_cluster(python: str, system: str, variant: str, num_ps: int, megabytes: int, warmup: int,
                steps: int, repeats: int, timeout: float) -> dict:
    """Starts the PS tasks and the worker, returns the worker's RESULT, stops every process."""
    ports = free_ports(num_ps + 1)
    cluster = {"worker": [f"127.0.0.1:{ports[0]}"]}
    if num_ps:
        cluster["ps"] = [f"127.0.0.1:{p}" for p in ports[1:]]
    base = [python, TASK, "--system", system, "--cluster", json.dumps(cluster)]
    procs: list[subprocess.Popen] = []
    logs = []
    deadline = time.monotonic() + timeout
    try:
        for i in range(num_ps):
            log = tempfile.TemporaryFile()
            logs.append(log)
            procs.append(subprocess.Popen(base + ["--job", "ps", "--task", str(i)], stdout=subprocess.PIPE,
                                          stderr=log, env=_env(system), cwd=common.ROOT))
        for p in procs:
            _read_line(p, b"READY", deadline, bytearray())
        log = tempfile.TemporaryFile()
        logs.append(log)
        worker = subprocess.Popen(
            base + ["--job", "worker", "--variant", variant, "--num-ps", str(num_ps), "--megabytes",
                    str(megabytes), "--warmup", str(warmup), "--steps", str(steps), "--repeats", str(repeats)],
            stdout=subprocess.PIPE, stderr=log, env=_env(system), cwd=common.ROOT)
        procs.append(worker)
        try:
            line = _read_line(worker, b"RESULT", deadline, bytearray())
        except TaskError as e:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-3000:]
            raise TaskError(f"{system} {variant} num_ps={num_ps}: {e}\n{tail}") from None
        return json.loads(line[len(b"RESULT"):])
    finally:
        _stop(procs)
        for log in logs:
            log.close()


def expected_scalar_check(num_ps: int, steps_run: int) -> float:
    """The sum of the scalar variables after `steps_run` steps, computed here in float32."""
    v = np.float32(0.0)
    for _ in range(steps_run):
        total = np.float32(v * max(num_ps, 1))
        v = np.float32(v + np.float32(np.float32(total * np.float32(1e-3)) + np.float32(1.0)))
    return float(v * max(num_ps, 1))


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", default="scalar,dense,sparse")
    p.add_argument("--ps", default="0,1,2,4", help="numbers of PS tasks, comma-separated")
    p.add_argument("--systems", default="tensorweave,tf")
    p.add_argument("--steps", type=int, help="timed steps per repeat (default: 200 scalar/sparse, 10 dense)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--dense-mb", type=int, default=100)
    p.add_argument("--sparse-mb", type=int, default=256)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds for one cluster run")
    p.add_argument("--quick", action="store_true", help="small models (4 MB dense, 16 MB sparse), few steps")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    # SIGTERM (a `timeout` around this driver) unwinds like an exception, so the finally blocks
    # still kill every task process started.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.quick:
        args.dense_mb, args.sparse_mb = 4, 16
        args.repeats, args.warmup = 1, 2
        args.steps = args.steps or 5
    variants = args.variants.split(",")
    ps_counts = [int(n) for n in args.ps.split(",")]
    systems = {}
    for s in args.systems.split(","):
        if s == "tensorweave":
            systems[s] = sys.executable
        else:
            py = tf_python()
            if py is None:
                print("TensorFlow not importable: no ratio", flush=True)
            else:
                systems[s] = py

    runs = []  # (variant label, variant, megabytes, num_ps)
    for v in variants:
        if v == "scalar":
            runs += [("scalar", v, 0, n) for n in ps_counts]
        elif v == "dense":
            runs += [(f"dense {args.dense_mb} MB", v, args.dense_mb, n) for n in ps_counts]
        elif v == "sparse":
            for mb in (args.sparse_mb, args.sparse_mb // 4):
                runs += [(f"sparse {mb} MB", v, mb, n) for n in ps_counts]
        else:
            p.error(f"unknown variant {v!r}")

    print(f"{'variant':<16s} {'num_ps':>6s} {'tensorweave':>16s} {'TensorFlow':>16s} {'ratio':>7s}", flush=True)
    results = []
    failed = False
    for label, variant, mb, num_ps in runs:
        steps = args.steps or (10 if variant == "dense" else 200)
        row: dict = {"variant": label, "num_ps": num_ps}
        for system, python in systems.items():
            try:
                r = run_cluster(python, system, variant, num_ps, mb, args.warmup, steps, args.repeats, args.timeout)
            except TaskError as e:
                sys.stderr.write(f"{e}\n")
                failed = True
                continue
            if variant == "scalar":
                want = expected_scalar_check(num_ps, r["steps_run"])
                if abs(r["check"] - want) > 1e-4 * abs(want):
                    sys.stderr.write(f"{system} scalar num_ps={num_ps}: variables hold {r['check']}, "
                                     f"expected {want}\n")
                    failed = True
            row[system] = r["seconds_per_step"]
        results.append(row)
        tw, tf_ = row.get("tensorweave"), row.get("tf")
        cells = [f"{x * 1e3:10.3f} ms/st" if x is not None else f"{'-':>16s}" for x in (tw, tf_)]
        ratio = f"{tw / tf_:7.3f}" if tw is not None and tf_ is not None else f"{'':>7s}"
        extra = ""
        if variant == "dense" and num_ps:
            # the model crosses the loopback twice per step: read to the worker, update back
            extra = "   " + "  ".join(f"{name} {2 * mb / row[name]:7.0f} MB/s" for name in ("tensorweave", "tf")
                                      if name in row)
        print(f"{label:<16s} {num_ps:>6d} {cells[0]} {cells[1]} {ratio}{extra}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
