"""tf.gfile / tf.io.gfile against what TensorFlow 2.21 does (tests/data/tf_gfile_expected.json,
written by tests/data/make_tf_gfile_fixtures.py from the cases in tests/data/gfile_cases.py)."""
import json
import os
import pickle
import sys

import numpy as np
import pytest

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
sys.path.insert(0, DATA)
import gfile_cases  # noqa: E402

EXPECTED = json.load(open(os.path.join(DATA, "tf_gfile_expected.json"), encoding="utf-8"))["cases"]


def test_every_case_was_recorded():
    assert sorted(EXPECTED) == sorted(gfile_cases.CASES)


@pytest.mark.parametrize("name", sorted(gfile_cases.CASES))
def test_case_matches_tensorflow(name, tmp_path):
    root = str(tmp_path / "root")
    os.makedirs(root)
    gfile_cases.setup(root)
    got = gfile_cases.outcome(lambda: gfile_cases.CASES[name](tf, root), root)
    assert got == EXPECTED[name]


def test_errors_are_tf_classes(tmp_path):
    with pytest.raises(tf.errors.NotFoundError) as info:
        tf.gfile.GFile(str(tmp_path / "missing")).read()
    assert info.value.error_code == tf.errors.NOT_FOUND
    with pytest.raises(tf.errors.UnimplementedError, match="File system scheme 'gs' not implemented"):
        tf.gfile.Exists("gs://bucket/x")


def test_pathlike_and_bytes_names(tmp_path):
    path = tmp_path / "p.txt"
    with tf.io.gfile.GFile(path, "w") as f:
        f.write("abc")
    assert tf.io.gfile.exists(str(path).encode()) and tf.gfile.Stat(path).length == 3
    assert tf.io.gfile.join("gs://b", "x", "y") == "gs://b/x/y" and tf.io.gfile.join("a", "b") == os.path.join("a", "b")
    st = tf.gfile.Stat(path)
    assert st.mtime_nsec == os.stat(path).st_mtime_ns and not st.is_directory


def test_glob_keeps_file_url_and_matches_hidden_names(tmp_path):
    (tmp_path / ".hidden").write_text("x")
    (tmp_path / "shown").write_text("x")
    assert tf.gfile.Glob(str(tmp_path / "*")) == [str(tmp_path / ".hidden"), str(tmp_path / "shown")]
    assert tf.gfile.Glob("file://" + str(tmp_path / "s*")) == ["file://" + str(tmp_path / "shown")]


def test_writer_creates_its_file_on_first_write(tmp_path):
    path = str(tmp_path / "lazy.txt")
    f = tf.gfile.GFile(path, "w")
    assert not os.path.exists(path)
    f.write(b"x")
    f.close()
    assert open(path, "rb").read() == b"x"


def test_seek_position_keyword_and_bad_whence(tmp_path):
    path = tmp_path / "s.bin"
    path.write_bytes(b"0123456789")
    with tf.gfile.GFile(str(path), "rb") as f:
        f.seek(position=4)
        assert f.read(2) == b"45"
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid whence argument: 3"):
            f.seek(0, 3)
        with pytest.raises(TypeError):
            f.seek()


def test_libraries_read_and_write_through_gfile(tmp_path):
    # What programs do with GFile: np.save/np.load, pickle and json through the file object.
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    with tf.gfile.GFile(str(tmp_path / "a.npy"), "wb") as f:
        np.save(f, arr)
    with tf.gfile.GFile(str(tmp_path / "a.npy"), "rb") as f:
        np.testing.assert_array_equal(np.load(f), arr)
    with tf.gfile.Open(str(tmp_path / "p.pkl"), "wb") as f:
        pickle.dump({"w": arr, "step": 3}, f)
    with tf.gfile.Open(str(tmp_path / "p.pkl"), "rb") as f:
        loaded = pickle.load(f)
    assert loaded["step"] == 3 and np.array_equal(loaded["w"], arr)
    with tf.io.gfile.GFile(str(tmp_path / "c.json"), "w") as f:
        json.dump({"lr": 0.1}, f)
    with tf.io.gfile.GFile(str(tmp_path / "c.json")) as f:
        assert json.load(f) == {"lr": 0.1}
