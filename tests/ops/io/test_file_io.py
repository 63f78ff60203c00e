"""ReadFile / WriteFile: contents round trip, parent directories, TF's error classes."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op


def test_read_file_returns_exact_bytes(tmp_path):
    path = tmp_path / "data.bin"
    payload = bytes(range(256)) * 3
    path.write_bytes(payload)
    check_op(tf.read_file(str(path)), np.array(payload, dtype=object))
    check_op(tf.io.read_file(tf.constant(str(path))), np.array(payload, dtype=object))


def test_read_file_fed_name(tmp_path):
    names = []
    for i in range(3):
        p = tmp_path / f"f{i}.txt"
        p.write_bytes(f"file {i}".encode())
        names.append(str(p))
    name = tf.placeholder(tf.string, [])
    contents = tf.read_file(name)
    with tf.Session() as sess:
        assert [sess.run(contents, {name: n}) for n in names] == [b"file 0", b"file 1", b"file 2"]


def test_write_file_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "out.txt"
    contents = tf.placeholder(tf.string, [])
    write = tf.write_file(str(target), contents)
    assert isinstance(write, tf.Operation)
    with tf.Session() as sess:
        sess.run(write, {contents: b"first version, longer"})
        assert target.read_bytes() == b"first version, longer"
        sess.run(write, {contents: b"second"})
    assert target.read_bytes() == b"second"
    assert os.listdir(target.parent) == ["out.txt"]  # no temporary files left behind


def test_write_then_read_in_one_graph(tmp_path):
    path = str(tmp_path / "roundtrip")
    write = tf.io.write_file(path, tf.string_join(["x", "y"], separator="="))
    with tf.control_dependencies([write]):
        read = tf.read_file(path)
    with tf.Session() as sess:
        assert sess.run(read) == b"x=y"


def test_errors(tmp_path):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="nope"):
            sess.run(tf.read_file(str(tmp_path / "nope")))
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(tf.read_file(str(tmp_path)))
        (tmp_path / "dir").mkdir()
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(tf.write_file(str(tmp_path / "dir"), "x"))
        assert os.listdir(tmp_path / "dir") == []
        blocker = tmp_path / "file"
        blocker.write_bytes(b"")
        with pytest.raises(tf.errors.OpError):
            sess.run(tf.write_file(str(blocker / "child"), "x"))  # a parent that is a file
    with pytest.raises(ValueError, match="rank 0"):
        tf.read_file(["a", "b"])
    with pytest.raises(ValueError, match="rank 0"):
        tf.write_file("a", ["x", "y"])
