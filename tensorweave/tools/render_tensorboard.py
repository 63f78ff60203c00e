"""Renders TensorBoard's dashboards for a log directory to PNG files, to look at by eye (outside CI):
starts the real `tensorboard` server on 127.0.0.1 on a free port, has headless Chromium (Debian's
`chromium` package) screenshot the scalars, graphs, histograms and images dashboards, and stops
the server.

    python -m tensorweave.examples.mnist --steps 500 --logdir logs/mnist
    python -m tensorweave.tools.render_tensorboard logs/mnist --out tensorboard_png
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from typing import Optional, Sequence

from tensorweave.tools.tensorboard_server import TensorBoardServer

DASHBOARDS = ("scalars", "graphs", "histograms", "images", "distributions", "text")


def render(logdir: str, out: str, chromium: str, timeout: float = 90) -> list[str]:
    """The PNG paths written, one per dashboard."""
    os.makedirs(out, exist_ok=True)
    written = []
    with TensorBoardServer(logdir) as tb:
        runs = tb.wait_for_runs(timeout)
        print(f"tensorboard on port {tb.port} serves runs {runs}")
        for name in DASHBOARDS:
            path = os.path.abspath(os.path.join(out, f"{name}.png"))
            subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--screenshot={path}", "--window-size=1400,1000", "--virtual-time-budget=15000",
                            tb.url(f"/#{name}")], check=True, timeout=120,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            written.append(path)
            print(f"wrote {path}")
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
