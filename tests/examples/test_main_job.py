import numpy as np

from tensorweave.examples import cnn, datasets, mnist


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
    assert "test accuracy" in capsys.readouterr().out


def test_cnn_example_learns(capsys):
    accuracy = cnn.main(["--steps", "150", "--quiet", "--optimizer", "adam", "--learning-rate", "0.003"])
    assert accuracy >= 0.9
