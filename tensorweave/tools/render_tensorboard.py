"""Renders TensorBoard's dashboards for a log directory to PNG files, to look at by eye (outside CI):
starts the real `tensorboard` server on 127.0.0.1 on a free port, has headless Chromium (Debian's
`chromium` package) screenshot the scalars, graphs, histograms and images dashboards, and stops
the server.

    python -m tensorweave.examples.mnist --steps 500 --logdir logs/mnist
    python -m tensorweave.tools.render_tensorboard logs/mnist --out tensorboard_png
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Optional, Sequence

DASHBOARDS = ("scalars", "graphs", "histograms", "images", "distributions", "text")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_runs(port: int, proc: subprocess.Popen, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("tensorboard exited before serving")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/runs", timeout=5) as r:
                runs = json.loads(r.read())
            if runs:
                return runs
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"tensorboard served no runs within {timeout:.0f} s")


def render(logdir: str, out: str, chromium: str, timeout: float = 90) -> list[str]:
    """The PNG paths written, one per dashboard."""
    os.makedirs(out, exist_ok=True)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    written = []
    try:
        runs = _wait_for_runs(port, proc, timeout)
        print(f"tensorboard on port {port} serves runs {runs}")
        for name in DASHBOARDS:
            path = os.path.abspath(os.path.join(out, f"{name}.png"))
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--screenshot={path}", "--window-size=1400,1000", "--virtual-time-budget=15000",
                            f"http://127.0.0.1:{port}/#{name}"], check=True, timeout=120,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            written.append(path)
            print(f"wrote {path}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(15)
    return written


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logdir")
    p.add_argument("--out", default="tensorboard_png")
    p.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    args = p.parse_args(argv)
    render(args.logdir, args.out, args.chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
