"""Processes for the cluster tests: each runs this checkout's code (cwd = the repository root),
its output is collected by a thread, and `stop_all` kills whatever a test left running."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited; it only waits for its parent to reap it
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Proc:
    """A `python -m MODULE ARGS` child in its own session (so that its whole group can be killed)."""

    def __init__(self, module: str, *args: str, env: Optional[dict] = None) -> None:
        full_env = dict(os.environ)
        full_env.pop("TF_CONFIG", None)
        full_env.update(env or {})
        self.popen = subprocess.Popen([sys.executable, "-m", module, *args], cwd=REPO, env=full_env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)
        self.pid = self.popen.pid
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            with self._changed:
                self._lines.append(line)
                self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "".join(self._lines)

    def wait_for(self, text: str, timeout: float) -> None:
        """Until `text` appears in the output; AssertionError (with the output) if the process
        ends or the time runs out first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while text not in "".join(self._lines):
                left = deadline - time.monotonic()
                if left <= 0 or (self.popen.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"{text!r} not printed (status {self.popen.poll()}):\n{''.join(self._lines)}")
                self._changed.wait(min(left, 0.2))

    def wait(self, timeout: float) -> int:
        status = self.popen.wait(timeout)
        self._reader.join(5)
        return status

    def signal(self, signum: int) -> None:
        self.popen.send_signal(signum)

    def kill_group(self) -> None:
        if self.popen.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.popen.wait()
        # children of the group that outlived its leader
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
