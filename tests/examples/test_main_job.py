import gzip
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.examples import cnn, datasets, mnist


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    """The main job writes its summaries under ./logs/mnist by default: keep them out of the repo."""
    monkeypatch.chdir(tmp_path)


def test_digits_data_is_real_and_split():
    data = datasets.load_digits()
    assert data.train_images.shape == (1437, 64) and data.test_images.shape == (360, 64)
    assert data.train_images.dtype == np.float32 and 0.0 <= data.train_images.min() <= data.train_images.max() <= 1.0
    assert sorted(set(data.train_labels.tolist())) == list(range(10))


def test_idx_reader_round_trip(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 8, 3]) + np.array([2, 3, 4], dtype=">u4").tobytes()
    path = tmp_path / "x-idx3-ubyte"
    path.write_bytes(header + images.tobytes())
    np.testing.assert_array_equal(datasets.read_idx(str(path)), images)


def test_main_job_reaches_95_percent_on_digits(capsys):
    accuracy = mnist.main(["--steps", "800", "--quiet", "--seed", "1"])
    assert accuracy >= 0.95
    out = capsys.readouterr().out
    assert f"test accuracy: {accuracy:.4f}" in out and "UCI digits" in out


def test_main_job_progress_bar_shows_running_loss(capsys):
    mnist.main(["--steps", "60", "--seed", "2", "--optimizer", "sgd", "--learning-rate", "0.5"])
    out = capsys.readouterr().out
    assert "loss=" in out and "60/60" in out


def _write_idx(path, array):
    """An IDX file (gzipped): magic 0 0 8 ndim, big-endian dims, uint8 data."""
    header = bytes([0, 0, 8, array.ndim]) + np.array(array.shape, dtype=">u4").tobytes()
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_main_job_reads_mnist_idx_files_with_data_dir(tmp_path, capsys):
    """Real MNIST's layout (28x28 uint8 IDX files), filled with the UCI digits scaled up, so the
    --data-dir path runs end to end offline."""
    digits = datasets.load_digits()

    def as_mnist(images):
        big = np.kron(images.reshape(-1, 8, 8), np.ones((3, 3), np.float32))  # 24x24
        return np.pad(big, ((0, 0), (2, 2), (2, 2))) * 255

    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", as_mnist(digits.train_images))
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", digits.train_labels)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", as_mnist(digits.test_images))
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", digits.test_labels)
    accuracy = mnist.main(["--data-dir", str(tmp_path), "--steps", "300", "--quiet", "--batch-size", "50",
                           "--optimizer", "adam", "--learning-rate", "0.002"])
    assert "28x28" in capsys.readouterr().out
    assert accuracy >= 0.93


def test_console_command_uses_command_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["tensorweave", "--steps", "5", "--quiet", "--hidden", "8"])
    mnist.cli()
    assert "test accuracy" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mnist.parse_args(["--optimizer", "nonsense"])


def test_cnn_example_learns(capsys):
    accuracy = cnn.main(["--steps", "150", "--quiet", "--optimizer", "adam", "--learning-rate", "0.003"])
    assert accuracy >= 0.9
    assert "test accuracy" in capsys.readouterr().out
    # it trained through the convolution and pooling kernels and their gradients
    import tensorweave as tf
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool", "MaxPoolGrad"} <= types


def test_main_job_writes_tensorboard_summaries_and_prints_the_command(tmp_path, capsys):
    logdir = tmp_path / "tb"
    mnist.main(["--steps", "45", "--quiet", "--logdir", str(logdir), "--summary-every", "10"])
    assert f"tensorboard --logdir {logdir}" in capsys.readouterr().out
    (name,) = [p.name for p in logdir.iterdir()]
    events = list(tf.train.summary_iterator(str(logdir / name)))
    steps = {tag: [e.step for e in events if e.HasField("summary") for v in e.summary.value if v.tag == tag]
             for tag in ("loss", "accuracy")}
    assert steps == {"loss": [0, 10, 20, 30, 40], "accuracy": [0, 10, 20, 30, 40]}
    assert any(e.HasField("graph_def") for e in events)
    assert [e.tagged_run_metadata.tag for e in events if e.HasField("tagged_run_metadata")] == ["step10"]
    mnist.main(["--steps", "3", "--quiet", "--logdir", ""])  # no summaries at all
    assert "tensorboard" not in capsys.readouterr().out
