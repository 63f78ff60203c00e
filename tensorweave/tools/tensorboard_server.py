"""The real `tensorboard` server for a log directory, on 127.0.0.1 on a free port, in its own
process group, stopped by its pid (used by tools/render_tensorboard.py and the tests)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TensorBoardServer:
    """`with TensorBoardServer(logdir) as tb: tb.wait_for_runs(...); tb.get(path, **params)`."""

    def __init__(self, logdir: str, reload_interval: int = 1) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1",
             "--port", str(self.port), "--reload_interval", str(reload_interval)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

    def url(self, path: str = "/", **params: Any) -> str:
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        return f"http://127.0.0.1:{self.port}{path}{query}"

    def get(self, path: str, **params: Any) -> bytes:
        with urllib.request.urlopen(self.url(path, **params), timeout=20) as response:
            return response.read()

    def wait_for_runs(self, timeout: float, want: Any = None) -> list[str]:
        """The runs it serves, once it serves any (or the run `want`); TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.stderr else ""
                raise RuntimeError(f"tensorboard exited before serving: {err}")
            try:
                runs = json.loads(self.get("/data/runs"))
                if runs and (want is None or want in runs):
                    return runs
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise TimeoutError(f"tensorboard served no runs within {timeout:.0f} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(15)
        if self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self) -> "TensorBoardServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
