"""Saving partitioned variables (issue 14): the shards are written as slices of ONE checkpoint
tensor (TF's save-slice info), so a checkpoint restores into any number of shards or into an
unpartitioned variable, and checkpoints interchange with TensorFlow's (tests/data/
tf_partitioned_ckpt written by TF 2.21; tests/data/tf_reads_tensorweave_partitioned.json records
TF reading ours, both from tests/data/make_tf_partitioned_fixtures.py)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.lib import tensor_bundle

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
EXPECTED = np.load(os.path.join(DATA, "tf_partitioned_expected.npz"))
TABLE = np.arange(10 * 3, dtype=np.float32).reshape(10, 3) * 0.5 - 2.0


def _model(shards, name="emb", shape=(10, 3), initializer=None):
    graph = tf.Graph()
    with graph.as_default():
        part = tf.fixed_size_partitioner(shards) if shards > 1 else None
        var = tf.get_variable(name, list(shape), initializer=initializer or tf.zeros_initializer(),
                              partitioner=part)
        bias = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        full = var.as_tensor() if shards > 1 else var.value()
    return graph, var, bias, full


def _save_table(tmp_path, shards):
    graph, var, bias, full = _model(shards, initializer=tf.constant_initializer(0.0))
    with graph.as_default():
        load = [tf.assign(v, TABLE[v._save_slice_info.var_offset[0]:][:v.get_shape()[0].value])
                for v in (var if shards > 1 else [])] or [tf.assign(var, TABLE)]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(load + [tf.assign(bias, [1.0, 2.0, 3.0])])
            np.testing.assert_array_equal(sess.run(full), TABLE)
            return saver.save(sess, str(tmp_path / f"model{shards}"))


@pytest.mark.parametrize("written, restored", [(4, 2), (4, 1), (4, 3), (1, 4), (2, 5)])
def test_restore_across_shard_counts(tmp_path, written, restored):
    path = _save_table(tmp_path, written)
    graph, var, bias, full = _model(restored)
    with graph.as_default():
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(full), TABLE)
            np.testing.assert_array_equal(sess.run(bias), [1.0, 2.0, 3.0])
            # ... and back: what this shard count writes restores into the original count
            again = saver.save(sess, str(tmp_path / "again"))
    graph, var, bias, full = _model(written)
    with graph.as_default(), tf.Session() as sess:
        tf.train.Saver().restore(sess, again)
        np.testing.assert_array_equal(sess.run(full), TABLE)


def test_checkpoint_holds_one_full_tensor_with_slices(tmp_path):
    path = _save_table(tmp_path, 4)
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == {"emb": [10, 3], "bias": [3]}
    np.testing.assert_array_equal(reader.get_tensor("emb"), TABLE)
    entry = tensor_bundle.BundleReader(path).entry("emb")
    # as TF's checkpoints (tests/data/tf_partitioned_ckpt): every extent explicit, full columns too
    extents = sorted([(e.start, e.length) for e in s.extent] for s in entry.slices)
    assert extents == [[(0, 3), (0, 3)], [(3, 3), (0, 3)], [(6, 2), (0, 3)], [(8, 2), (0, 3)]]


def test_var_list_forms(tmp_path):
    path = _save_table(tmp_path, 4)
    for as_dict in (False, True):
        graph, var, bias, full = _model(2)
        with graph.as_default():
            saver = tf.train.Saver({"emb": var} if as_dict else [var])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                saver.restore(sess, path)
                np.testing.assert_array_equal(sess.run(full), TABLE)
                np.testing.assert_array_equal(sess.run(bias), [0.0, 0.0, 0.0])  # not in var_list


def test_restores_tensorflow_checkpoint():
    prefix = os.path.join(DATA, "tf_partitioned_ckpt", "model")
    for shards in (3, 2, 1, 4):
        graph = tf.Graph()
        with graph.as_default():
            part = tf.fixed_size_partitioner(shards) if shards > 1 else None
            emb = tf.get_variable("emb", [11, 4], partitioner=part)
            bias = tf.get_variable("bias", [3])
            full = emb.as_tensor() if shards > 1 else emb.value()
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, prefix)
                np.testing.assert_array_equal(sess.run(full), EXPECTED["ckpt_emb"])
                np.testing.assert_array_equal(sess.run(bias), EXPECTED["ckpt_bias"])


def test_tensorflow_reads_our_partitioned_checkpoint(tmp_path):
    with open(os.path.join(DATA, "tf_reads_tensorweave_partitioned.json")) as f:
        record = json.load(f)
    assert record["tw_emb_equal"] and record["tw_step"] == 42
    assert record["restored_2_shards_equal"] and record["restored_1_shards_equal"]
    assert record["restored_2_shards_step"] == 42 and record["restored_1_shards_step"] == 42
    # what the fixture's tensorweave writer writes today has the layout TF read then
    table = np.arange(13 * 3, dtype=np.float32).reshape(13, 3) * 0.5 - 4.0
    with tf.Graph().as_default():
        tf.get_variable("tw_emb", initializer=tf.constant(table), partitioner=tf.fixed_size_partitioner(4))
        tf.get_variable("tw_step", initializer=tf.constant(42, tf.int64))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "tw_model"), write_meta_graph=False)
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_shape_map() == record["shapes"]
    np.testing.assert_array_equal(reader.get_tensor("tw_emb"), table)


def test_meta_graph_keeps_save_slice_info(tmp_path):
    graph, var, bias, full = _model(3)
    with graph.as_default():
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        shards = [v for v in tf.global_variables() if v.name.startswith("emb/")]
        infos = [v._save_slice_info for v in shards]
        assert [(i.full_name, i.full_shape, i.var_offset, i.var_shape) for i in infos] == [
            ("emb", [10, 3], [0, 0], [4, 3]), ("emb", [10, 3], [4, 0], [3, 3]), ("emb", [10, 3], [7, 0], [3, 3])]
        assert infos[1].spec == "10 3 4,3:0,3"


def test_mixing_slices_and_whole_variable_with_one_name_is_refused():
    graph, var, bias, full = _model(2)
    with graph.as_default():
        whole = tf.Variable(tf.zeros([10, 3]), name="a_whole")
        list(var)[0]._set_save_slice_info(tf.Variable.SaveSliceInfo("a_whole", [10, 3], [0, 0], [5, 3]))
        with pytest.raises(ValueError, match="Mixing slices and non-slices with the same name: a_whole"):
            tf.train.Saver(list(var) + [whole])


def test_sharded_saver_merges_slices_written_on_several_devices(tmp_path):
    devices = iter(["/cpu:1", "/cpu:0", "/cpu:1", "/cpu:0"])
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(lambda op: next(devices) if op.type == "VariableV2" else ""):
            emb = tf.get_variable("emb", initializer=tf.constant(TABLE), partitioner=tf.fixed_size_partitioner(4))
        assert [v.device for v in emb] == ["/device:CPU:1", "/device:CPU:0", "/device:CPU:1", "/device:CPU:0"]
        saver = tf.train.Saver(sharded=True)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    assert sorted(p.name for p in tmp_path.iterdir() if ".data-" in p.name) == [
        "model.data-00000-of-00002", "model.data-00001-of-00002"]
    np.testing.assert_array_equal(tf.train.NewCheckpointReader(path).get_tensor("emb"), TABLE)
    graph, var, bias, full = _model(1)
    with graph.as_default(), tf.Session() as sess:
        tf.train.Saver([var]).restore(sess, path)
        np.testing.assert_array_equal(sess.run(full), TABLE)


def _slots_model(shards):
    emb_table = np.arange(11 * 4, dtype=np.float32).reshape(11, 4) / 20.0 - 1.0
    part = tf.fixed_size_partitioner(shards) if shards > 1 else None
    emb = tf.get_variable("emb", initializer=tf.constant(emb_table), partitioner=part)
    rows = tf.nn.embedding_lookup(emb, tf.constant([1, 5, 9, 5]), partition_strategy="div")
    optimizer = tf.train.AdagradOptimizer(0.5)
    train = optimizer.minimize(tf.reduce_sum(tf.square(rows)))
    ema = tf.train.ExponentialMovingAverage(0.5)
    shards_list = list(emb) if shards > 1 else [emb]
    with tf.control_dependencies([train]):
        average = ema.apply(shards_list)
    slots = [optimizer.get_slot(v, "accumulator") for v in shards_list]
    averages = [ema.average(v) for v in shards_list]
    return emb, average, slots, averages


def _full(parts):
    return tf.concat(parts, 0) if len(parts) > 1 else tf.identity(parts[0])


def test_optimizer_and_average_slots_are_slices_as_tensorflow(tmp_path):
    with tf.Graph().as_default():
        emb, average, slots, averages = _slots_model(3)
        assert [s._save_slice_info.full_name for s in slots] == ["emb/Adagrad"] * 3
        assert [a._save_slice_info.spec for a in averages] == ["11 4 0,4:0,4", "11 4 4,4:0,4", "11 4 8,3:0,4"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(average)
            path = tf.train.Saver().save(sess, str(tmp_path / "model"), write_meta_graph=False)
    reader = tf.train.NewCheckpointReader(path)
    assert sorted(reader.get_variable_to_shape_map()) == list(EXPECTED["slots_keys"])
    for key in ("emb", "emb/Adagrad", "emb/ExponentialMovingAverage"):
        np.testing.assert_allclose(reader.get_tensor(key), EXPECTED["slots_" + key.replace("/", "_")], rtol=1e-6)


@pytest.mark.parametrize("shards", [2, 1])
def test_tensorflow_slots_checkpoint_restores_into_other_shard_counts(shards):
    with tf.Graph().as_default():
        emb, average, slots, averages = _slots_model(shards)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, os.path.join(DATA, "tf_partitioned_slots_ckpt", "model"))
            values = sess.run([_full(list(emb) if shards > 1 else [emb]), _full(slots), _full(averages)])
    for value, key in zip(values, ("emb", "emb/Adagrad", "emb/ExponentialMovingAverage")):
        np.testing.assert_array_equal(value, EXPECTED["slots_" + key.replace("/", "_")])
