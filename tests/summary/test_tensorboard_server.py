"""The real `tensorboard` server, started on 127.0.0.1 on a free port for a log directory we
wrote, serves our runs, scalars, histograms, images and graph through its HTTP data API. The
server is stopped (by its pid) whatever happens."""
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

import numpy as np

from tests.summary.test_file_writer import training_logdir

START_TIMEOUT_S = 90


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, **params):
    url = f"http://127.0.0.1:{port}{path}" + (("?" + urllib.parse.urlencode(params)) if params else "")
    with urllib.request.urlopen(url, timeout=20) as response:
        return response.read()


def test_tensorboard_serves_what_we_wrote(tmp_path):
    losses = training_logdir(str(tmp_path / "run1"))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(tmp_path),
                             "--host", "127.0.0.1", "--port", str(port), "--reload_interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline, runs = time.monotonic() + START_TIMEOUT_S, []
        while time.monotonic() < deadline and "run1" not in runs:
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
            try:
                runs = json.loads(get(port, "/data/runs"))
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.5)
        assert runs == ["run1"]
        scalars = json.loads(get(port, "/data/plugin/scalars/scalars", run="run1", tag="loss"))
        assert [s[1] for s in scalars] == list(range(5))
        np.testing.assert_allclose([s[2] for s in scalars], losses, rtol=1e-6)
        tags = json.loads(get(port, "/data/plugin/histograms/tags"))
        assert "w" in tags["run1"]
        images = json.loads(get(port, "/data/plugin/images/tags"))
        assert "x/image" in images["run1"]
        graph = get(port, "/data/plugin/graphs/graph", run="run1", conceptual="false").decode()
        assert 'name: "layer/w"' in graph and 'name: "input/x"' in graph
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(15)
        proc.stderr.close()
