"""tf.data.experimental.CsvDataset against TF's records (tests/data/tf_data_expected.json) and
its errors."""
import os

import pytest

import tensorweave as tf
from tests.tfdata.helpers import FILES, load_expected, plain, run_all

EXPECTED = load_expected()


def _csv():
    return tf.data.experimental.CsvDataset(
        os.path.join(FILES, "table.csv"), [tf.int32, [0.5], ["none"], [7]], header=True,
        na_value="NA")


def test_csv_records_as_tf_reads_them():
    assert [plain(e) for e in run_all(_csv)] == EXPECTED["csv"]


def test_csv_select_cols_and_required_fields(tmp_path):
    path = str(tmp_path / "t.csv")
    with open(path, "w") as f:
        f.write("1,a,2.5\n,b,3\n")
    got = run_all(lambda: tf.data.experimental.CsvDataset(path, [tf.string, [0.0]], select_cols=[1, 2]))
    assert [(a, float(b)) for a, b in got] == [(b"a", 2.5), (b"b", 3.0)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 is required but missing"):
        run_all(lambda: tf.data.experimental.CsvDataset(path, [tf.int32, tf.string, tf.float32]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid"):
        run_all(lambda: tf.data.experimental.CsvDataset(path, [[0], [0], [0.0]]))
