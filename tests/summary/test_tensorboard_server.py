"""The real `tensorboard` server, started on 127.0.0.1 on a free port for a log directory we
wrote, serves our runs, scalars, histograms, images and graph through its HTTP data API. The
server is stopped (by its pid) whatever happens."""
import json

import numpy as np

from tensorweave.tools.tensorboard_server import TensorBoardServer
from tests.summary.test_file_writer import training_logdir

START_TIMEOUT_S = 90


def test_tensorboard_serves_what_we_wrote(tmp_path):
    losses = training_logdir(str(tmp_path / "run1"))
    with TensorBoardServer(str(tmp_path)) as tb:
        assert tb.wait_for_runs(START_TIMEOUT_S, want="run1") == ["run1"]
        scalars = json.loads(tb.get("/data/plugin/scalars/scalars", run="run1", tag="loss"))
        assert [s[1] for s in scalars] == list(range(5))
        np.testing.assert_allclose([s[2] for s in scalars], losses, rtol=1e-6)
        tags = json.loads(tb.get("/data/plugin/histograms/tags"))
        assert "w" in tags["run1"]
        images = json.loads(tb.get("/data/plugin/images/tags"))
        assert "x/image" in images["run1"]
        graph = tb.get("/data/plugin/graphs/graph", run="run1", conceptual="false").decode()
        assert 'name: "layer/w"' in graph and 'name: "input/x"' in graph
    assert tb.proc.poll() is not None  # stopped
