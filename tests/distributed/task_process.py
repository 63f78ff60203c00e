"""Real server processes for the distributed tests: started on 127.0.0.1 (port 0 unless the
cluster names one), stopped by pid (kill, then wait with a timeout) in the tests' `finally`."""
import json
import os
import select
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START_TIMEOUT_S = 60.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TaskProcess:
    """`python -m tests.distributed.serve_task` with the given environment additions; stderr
    goes to `stderr_path` (read it with `.stderr()`), `.target` is its grpc:// target."""

    def __init__(self, cluster, job, task, stderr_path, env=None):
        environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORWEAVE_")}
        environment.update(env or {})
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.distributed.serve_task", json.dumps(cluster), job, str(task)],
            cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=self._stderr)
        self.target = None
        try:
            self.target = self._wait_up()
        except BaseException:
            self.stop()
            raise
        self.address = self.target[len("grpc://"):]

    def _wait_up(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise RuntimeError(f"the task did not come up (rc {self.proc.poll()}):\n{self.stderr()[-3000:]}")
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 0.5))
            if ready:
                byte = os.read(self.proc.stdout.fileno(), 1)
                if not byte:
                    continue
                line += byte
        words = line.decode().split()
        assert words[0] == "up", line
        return words[1]

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        finally:
            self.proc.stdout.close()
            self._stderr.close()
