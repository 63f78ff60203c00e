"""SaveV2 / RestoreV2 / MergeV2Checkpoints, TF1's Save / SaveSlices / Restore / RestoreSlice and
ShardedFilename / ShardedFilespec: values, static shapes against real outputs, and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.io import save_restore as io
from tensorweave.testing.op_test import assert_static_shape_matches


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_save_v2_restore_v2_values_dtypes_and_static_shapes(tmp_path):
    prefix = str(tmp_path / "ckpt")
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    s = np.array([b"x", b"yz"], dtype=object)
    save = io.save_v2(prefix, ["a", "s", "n"], ["", "", ""], [a, s, np.int64(-5)])
    _run(save)
    restored = io.restore_v2(prefix, ["s", "a", "n", "a"], ["", "", "", "3 4 1,2:0,3"],
                             [tf.string, tf.float64, tf.int64, tf.float64])
    values = _run(restored)
    np.testing.assert_array_equal(values[0], s)
    np.testing.assert_array_equal(values[1], a)
    assert values[2] == -5 and values[2].dtype == np.int64
    np.testing.assert_array_equal(values[3], a[1:3, 0:3])
    assert restored[3].shape.as_list() == [2, 3]  # known from the constant slice spec
    for t, v in zip(restored, values):
        assert_static_shape_matches(t, v)


def test_restore_v2_errors_name_the_tensor(tmp_path):
    prefix = str(tmp_path / "ckpt")
    _run(io.save_v2(prefix, ["w"], [""], [np.zeros(3, np.float32)]))
    with pytest.raises(tf.errors.NotFoundError, match="Key v not found in checkpoint"):
        _run(io.restore_v2(prefix, ["v"], [""], [tf.float32]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = w; expected dtype int32"):
        _run(io.restore_v2(prefix, ["w"], [""], [tf.int32]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape stored"):
        _run(io.restore_v2(prefix, ["w"], ["4 0,2"], [tf.float32]))
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        _run(io.restore_v2(str(tmp_path / "none"), ["w"], [""], [tf.float32]))


def test_build_time_shape_errors():
    with pytest.raises(ValueError, match="rank 0"):
        io.save_v2(["a", "b"], ["w"], [""], [np.zeros(2)])
    with pytest.raises(ValueError, match="must be equal"):
        io.save_v2("p", ["w", "v"], ["", ""], [np.zeros(2)])
    with pytest.raises(ValueError, match="must be equal"):
        io.restore_v2("p", ["w", "v"], ["", ""], [tf.float32])
    with pytest.raises(TypeError):
        io.save_v2("p", ["w"], [""], np.zeros(2))


def test_run_time_count_errors(tmp_path):
    names = tf.placeholder(tf.string, [None])
    save = io.save_v2(str(tmp_path / "c"), names, [""], [np.zeros(2)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_names to have 1 elements, got 2"):
        _run(save, {names: [b"a", b"b"]})


def test_v1_save_slices_restore_slice(tmp_path):
    name = str(tmp_path / "v1")
    full = np.arange(8, dtype=np.float32).reshape(4, 2)
    save = io.save_slices(name, ["w", "p"], ["", "4 2 0,2:-"], [np.int32(7), full[:2]])
    _run(save)
    with tf.Graph().as_default():
        _run(io.save(str(tmp_path / "v1b"), ["x"], [full]))
        whole = io.restore(str(tmp_path / "v1b"), "x", tf.float32)
        part = io.restore_slice(name, "p", "4 2 0,1:1,1", tf.float32)
        w = io.restore(name, "w", tf.int32)
        values = _run([whole, part, w])
        np.testing.assert_array_equal(values[0], full)
        np.testing.assert_array_equal(values[1], [[1.0]])
        assert values[2] == 7
        assert part.shape.as_list() == [1, 1]
        for t, v in zip([whole, part, w], values):
            assert_static_shape_matches(t, v)
        with pytest.raises(tf.errors.NotFoundError, match="slices of p"):
            _run(io.restore_slice(name, "p", "4 2 1,3:-", tf.float32))  # rows 2-3 were never saved


def test_sharded_names_and_merge(tmp_path):
    fname = io.sharded_filename("/a/model", 1, 3)
    spec = io.sharded_filespec("/a/model", 3)
    values = _run([fname, spec])
    assert values == [b"/a/model-00001-of-00003", b"/a/model-?????-of-00003"]
    for t, v in zip([fname, spec], values):
        assert_static_shape_matches(t, v)
    parts = [str(tmp_path / "m_temp" / f"part-{i:05d}-of-00002") for i in range(2)]
    _run([io.save_v2(parts[i], [f"v{i}"], [""], [np.full(2, i)]) for i in range(2)])
    _run(io.merge_v2_checkpoints(parts, str(tmp_path / "m")))
    restored = _run(io.restore_v2(str(tmp_path / "m"), ["v1", "v0"], ["", ""], [tf.int64, tf.int64]))
    np.testing.assert_array_equal(restored[0], [1, 1])
    np.testing.assert_array_equal(restored[1], [0, 0])
