"""tf.train.Saver, the checkpoint state file and checkpoint readers."""
import os
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.lib.atomic_write import wait_for_background_removals
from tensorweave.training import saver as saver_module

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")


def _vars():
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    b = tf.Variable(np.array([1.5, -2.5]), name="b")
    s = tf.Variable(np.array([b"a", b"bc"], dtype=object), name="s")
    return w, b, s


def test_saver_def_and_node_names_follow_tf():
    _vars()
    saver = tf.train.Saver()
    sd = saver.as_saver_def()
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name) == \
        ("save/Const:0", "save/control_dependency:0", "save/restore_all")
    assert sd.max_to_keep == 5 and sd.version == tf.train.SaverDef.V2 and not sd.sharded
    graph = tf.get_default_graph()
    for name in ("save/filename/input", "save/filename", "save/SaveV2", "save/SaveV2/tensor_names",
                 "save/RestoreV2", "save/Assign", "save/Assign_2"):
        graph.get_operation_by_name(name)
    names = tf.make_ndarray(graph.get_operation_by_name("save/SaveV2/tensor_names").get_attr("value"))
    assert names.tolist() == [b"b", b"s", b"w"]  # sorted, by op name
    assert tf.train.Saver().saver_def.restore_op_name == "save_1/restore_all"


def test_save_and_restore_roundtrip(tmp_path):
    w, b, s = _vars()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
        assert path == str(tmp_path / "model.ckpt")
        assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt.data-00000-of-00001",
                                              "model.ckpt.index", "model.ckpt.meta"]
        sess.run([w.assign(tf.zeros_like(w)), b.assign([0.0, 0.0]), s.assign(["", ""])])
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), np.arange(6, dtype=np.float32).reshape(2, 3))
        np.testing.assert_array_equal(sess.run(b), [1.5, -2.5])
        assert sess.run(s).tolist() == [b"a", b"bc"]
    with tf.Session() as fresh:  # restore initializes variables in a new session
        saver.restore(fresh, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(fresh.run(b), [1.5, -2.5])


def test_var_list_as_list_and_dict(tmp_path):
    w, b, s = _vars()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver({"renamed/w": w, "bias": b}).save(sess, str(tmp_path / "d"))
        tf.train.Saver([w]).save(sess, str(tmp_path / "l"))
    assert tf.train.list_variables(str(tmp_path / "d")) == [("bias", [2]), ("renamed/w", [2, 3])]
    assert tf.train.list_variables(str(tmp_path / "l")) == [("w", [2, 3])]
    with tf.Graph().as_default():
        other = tf.Variable(np.zeros(2), name="other")
        with tf.Session() as sess:
            tf.train.Saver({"bias": other}).restore(sess, str(tmp_path / "d"))
            np.testing.assert_array_equal(sess.run(other), [1.5, -2.5])
    with pytest.raises(ValueError, match="At least two variables have the same name: w"):
        tf.train.Saver([w, w])
    with pytest.raises(TypeError, match="Not a variable"):
        tf.train.Saver({"x": tf.constant(1.0)})
    with pytest.raises(TypeError, match="dict or a list"):
        tf.train.Saver(w)


def test_global_step_names_and_max_to_keep(tmp_path, monkeypatch):
    w, _, _ = _vars()
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 10)
    saver = tf.train.Saver(max_to_keep=2, pad_step_number=False)
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = []
        for _ in range(4):
            sess.run(inc)
            paths.append(saver.save(sess, prefix, global_step=step))
        assert paths == [f"{prefix}-{k}" for k in (10, 20, 30, 40)]
        assert saver.last_checkpoints == paths[2:]
        assert not tf.train.checkpoint_exists(paths[0])  # its index is removed at once
        wait_for_background_removals()  # the data files a moment later
        for old in paths[:2]:
            assert not tf.train.checkpoint_exists(old)
            assert not any(f.startswith(os.path.basename(old) + ".") for f in os.listdir(tmp_path))
        for kept in paths[2:]:
            assert tf.train.checkpoint_exists(kept) and os.path.exists(kept + ".meta")
        state = tf.train.get_checkpoint_state(str(tmp_path))
        assert state.model_checkpoint_path == paths[3]
        assert list(state.all_model_checkpoint_paths) == paths[2:]
        text = open(tmp_path / "checkpoint").read()
        assert text == f'model_checkpoint_path: "{paths[3]}"\n' + "".join(
            f'all_model_checkpoint_paths: "{p}"\n' for p in paths[2:])
        assert saver.save(sess, prefix, global_step=np.int64(7)).endswith("-7")
        padded = tf.train.Saver(pad_step_number=True).save(sess, prefix, global_step=3, write_meta_graph=False)
        assert padded == prefix + "-00000003"


def test_keep_checkpoint_every_n_hours(tmp_path, monkeypatch):
    _vars()
    clock = [1000.0]
    monkeypatch.setattr(saver_module.time, "time", lambda: clock[0])
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    prefix = str(tmp_path / "m")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(6):
            saver.save(sess, prefix, global_step=step, write_meta_graph=False)
            clock[0] += 1500.0  # 25 minutes
    wait_for_background_removals()
    kept = sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(tmp_path) if f.endswith(".index"))
    # As TF: saves at t = 1000, 2500, ..., 8500; the first checkpoint pushed out of max_to_keep
    # that is younger than build time + 1 hour (4600) is step 3 (t=5500): kept for good, and the
    # next mark moves to 8200; step 4 (t=7000) is deleted; 5 is the newest.
    assert kept == [3, 5]


def test_save_relative_paths_and_latest_filename(tmp_path):
    _vars()
    saver = tf.train.Saver(save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "m"), global_step=1, latest_filename="state", write_meta_graph=False)
    assert open(tmp_path / "state").read().splitlines()[0] == 'model_checkpoint_path: "m-1"'
    assert tf.train.latest_checkpoint(str(tmp_path), "state") == str(tmp_path / "m-1")
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    with pytest.raises(ValueError, match="path components"):
        saver.save(tf.Session(), str(tmp_path / "m"), latest_filename="a/b")
    with pytest.raises(ValueError, match="collides"):
        saver.save(tf.Session(), str(tmp_path / "checkpoint"))


def test_restore_errors_name_the_variable(tmp_path):
    w, b, _ = _vars()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver([w, b]).save(sess, str(tmp_path / "m"), write_meta_graph=False)
    with tf.Graph().as_default():
        tf.Variable(np.zeros((3, 2), np.float32), name="w")
        tf.Variable(np.zeros(2), name="b")
        tf.Variable(np.zeros(1), name="extra")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError, match="Key extra not found in checkpoint"):
                tf.train.Saver().restore(sess, str(tmp_path / "m"))
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Variable w: the graph has float32 \(3, 2\)"):
                tf.train.Saver(tf.global_variables()[:2]).restore(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        tf.Variable(np.zeros(2, np.int32), name="b")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = b; expected dtype int32"):
                tf.train.Saver().restore(sess, str(tmp_path / "m"))
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                tf.train.Saver().restore(sess, str(tmp_path / "nothing"))
            with pytest.raises(ValueError, match="None"):
                tf.train.Saver().restore(sess, None)


def test_shape_mismatch_with_an_imported_saver_names_the_variable(tmp_path):
    w, _, _ = _vars()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([w]).save(sess, str(tmp_path / "a"))
    with tf.Graph().as_default():
        other = tf.Variable(np.zeros((3, 2), np.float32), name="w")
        with tf.Session() as sess:
            sess.run(other.initializer)
            other_path = tf.train.Saver().save(sess, str(tmp_path / "b"), write_meta_graph=False)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Variable w could not be restored"):
                saver.restore(sess, other_path)


def test_corrupted_shard_is_detected_on_restore(tmp_path):
    w, b, _ = _vars()
    saver = tf.train.Saver([w, b])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
        data = path + ".data-00000-of-00001"
        raw = bytearray(open(data, "rb").read())
        raw[3] ^= 0x20  # inside "b" (saved first)
        open(data, "wb").write(bytes(raw))
        with pytest.raises(tf.errors.DataLossError, match=r"Checksum does not match.*tensor b in"):
            saver.restore(sess, path)


def test_sharded_save_writes_one_shard_per_device(tmp_path):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.device("/device:CPU:0"):
        a = tf.Variable(np.full(3, 1.0), name="a")
    with tf.device("/device:CPU:1"):
        c = tf.Variable(np.full(2, 2.0), name="c")
        d = tf.Variable(np.full(1, 3.0), name="d")
    saver = tf.train.Saver(sharded=True)
    assert saver.saver_def.sharded
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"), global_step=5)
        assert path == str(tmp_path / "m-5")
        files = sorted(os.listdir(tmp_path))
        assert files == ["checkpoint", "m-5.data-00000-of-00002", "m-5.data-00001-of-00002", "m-5.index", "m-5.meta"]
        sess.run([a.assign(a * 0), c.assign(c * 0), d.assign(d * 0)])
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run([a, c, d])[2], [3.0])
        np.testing.assert_array_equal(sess.run(c), [2.0, 2.0])
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"a": [3], "c": [2], "d": [1]}


def test_reshape_v1_allow_empty_and_defer_build(tmp_path):
    flat = tf.Variable(np.arange(6.0), name="v")
    with tf.Session() as sess:
        sess.run(flat.initializer)
        v1 = tf.train.Saver(write_version=tf.train.SaverDef.V1)
        assert tf.get_default_graph().get_operation_by_name("save/SaveSlices").type == "SaveSlices"
        v1.save(sess, str(tmp_path / "v1"), write_meta_graph=False)
    with tf.Graph().as_default():
        square = tf.Variable(np.zeros((2, 3)), name="v")
        with tf.Session() as sess:
            tf.train.Saver(reshape=True).restore(sess, str(tmp_path / "v1"))
            np.testing.assert_array_equal(sess.run(square), np.arange(6.0).reshape(2, 3))
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, str(tmp_path / "e")) is None
        deferred = tf.train.Saver(defer_build=True)
        with pytest.raises(RuntimeError, match="build"):
            deferred.save(tf.Session(), str(tmp_path / "x"))
        tf.Variable(1.0, name="late")
        deferred.build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            deferred.save(sess, str(tmp_path / "late"), write_meta_graph=False)
        assert tf.train.load_variable(str(tmp_path / "late"), "late:0") == 1.0


def test_checkpoint_state_helpers(tmp_path):
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text("this is { not a proto")
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    tf.train.update_checkpoint_state(str(tmp_path), "m-2", ["m-1"])
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / "m-2")
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "m-1"), str(tmp_path / "m-2")]
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # named, but no files
    proto = tf.train.generate_checkpoint_state_proto("rel", "rel/m-3", ["rel/m-2"])
    assert proto.model_checkpoint_path == "m-3" and list(proto.all_model_checkpoint_paths) == ["m-2", "m-3"]


def test_recover_last_checkpoints_and_mtimes(tmp_path):
    _vars()
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i, write_meta_graph=False) for i in range(2)]
    mtimes = tf.train.get_checkpoint_mtimes(paths + [str(tmp_path / "missing")])
    assert len(mtimes) == 2 and all(abs(t - time.time()) < 60 for t in mtimes)
    restarted = tf.train.Saver(max_to_keep=2)
    restarted.recover_last_checkpoints(paths + [str(tmp_path / "missing")])
    assert restarted.last_checkpoints == paths
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        restarted.save(sess, str(tmp_path / "m"), global_step=2, write_meta_graph=False)
    wait_for_background_removals()
    assert not tf.train.checkpoint_exists(paths[0]) and tf.train.checkpoint_exists(paths[1])
    restarted.set_last_checkpoints_with_time([(paths[1], 1.0)])
    assert restarted.last_checkpoints == [paths[1]]
    with pytest.raises(TypeError):
        restarted.set_last_checkpoints_with_time("nope")


def test_checkpoint_reader_and_utils(tmp_path):
    _vars()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=3)
    for where in (path, str(tmp_path)):
        assert tf.train.list_variables(where) == [("b", [2]), ("s", [2]), ("w", [2, 3])]
        np.testing.assert_array_equal(tf.train.load_variable(where, "b"), [1.5, -2.5])
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.has_tensor("w") and not reader.has_tensor("nope")
    assert reader.get_variable_to_dtype_map() == {"b": tf.float64, "s": tf.string, "w": tf.float32}
    assert reader.debug_string() == b"b (DT_DOUBLE) [2]\ns (DT_STRING) [2]\nw (DT_FLOAT) [2,3]\n"
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.NewCheckpointReader(str(tmp_path / "none"))
    os.makedirs(tmp_path / "empty_dir")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path / "empty_dir"))


def test_restore_checkpoint_written_by_tensorflow():
    """Variables with the names of a TF-written checkpoint (tests/data) restore TF's values."""
    expected = np.load(os.path.join(DATA, "tf_checkpoint_expected.npz"))
    with tf.variable_scope("dense"):
        kernel = tf.Variable(np.zeros((2, 3), np.float32), name="kernel")
    words = tf.Variable(np.array([b""] * 4, dtype=object), name="words")
    step = tf.Variable(np.int64(0), name="global_step")
    part = tf.Variable(np.zeros((6, 4), np.float32), name="part")  # saved as 3 slices by TF
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, os.path.join(DATA, "tf_checkpoint", "model.ckpt-7"))
        got = sess.run([kernel, words, step, part])
    np.testing.assert_array_equal(got[0], expected["dense__kernel"])
    assert got[1].tolist() == expected["words"].tolist()
    assert got[2] == 1234
    np.testing.assert_array_equal(got[3], expected["part"])


def test_import_meta_graph_returns_a_working_saver(tmp_path):
    w, _, _ = _vars()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta", import_scope="again")
        assert saver.saver_def.restore_op_name == "again/save/restore_all"
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run("again/w:0"), np.arange(6, dtype=np.float32).reshape(2, 3))
        assert g.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)[0].name == "again/w:0"


def test_uninitialized_variable_and_bad_saver_def(tmp_path):
    tf.Variable(1.0, name="never_initialized")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value never_initialized"):
            saver.save(sess, str(tmp_path / "m"))
    assert not tf.train.checkpoint_exists(str(tmp_path / "m"))
    assert not [f for f in os.listdir(tmp_path) if "data" in f or "index" in f]
    with pytest.raises(ValueError, match="save_tensor_name"):
        tf.train.Saver(saver_def=tf.train.SaverDef(restore_op_name="x"))
    with pytest.raises(ValueError, match="restore_op_name"):
        tf.train.Saver(saver_def=tf.train.SaverDef(save_tensor_name="x"))
