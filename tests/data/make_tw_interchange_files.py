"""Writes the GraphDefs and the SavedModel that real TensorFlow checks (run with tensorweave's
venv from the repository root; then `make_tf_graph_interchange_fixtures.py --check` under
/opt/tfref records what TF computes from them in tw_checked_by_tf.json).

- tests/data/tw_written/{mlp,cnn,lstm}.pb: frozen GraphDefs (tf.graph_util.convert_variables_to_constants)
  of the interchange models, written by tf.io.write_graph; tw_written_expected.npz: inputs and
  our outputs.
- tests/data/tw_saved_model/: a SavedModel from SavedModelBuilder ("serve" tag, predict
  signature "serving_default" and a classify-free "probs_only" one, an asset its main op reads);
  tw_saved_model_expected.npz: input and our outputs.
"""
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorweave as tf  # noqa: E402
from interchange_models import models  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.RandomState(34)
MODELS = models(tf, RNG)


def write_frozen_graphs():
    out_dir = os.path.join(HERE, "tw_written")
    os.makedirs(out_dir, exist_ok=True)
    expected = {}
    for name, (build, shape) in MODELS.items():
        with tf.Graph().as_default() as graph:
            x = tf.placeholder(tf.float32, [None] + shape[1:], name="input")
            y = build(x)
            value = RNG.uniform(-1, 1, size=shape).astype(np.float32)
            with tf.Session(graph=graph) as sess:
                sess.run(tf.global_variables_initializer())
                frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), [y.op.name])
                expected[f"{name}/input"] = value
                expected[f"{name}/output"] = sess.run(y, {x: value})
        tf.io.write_graph(frozen, out_dir, f"{name}.pb", as_text=False)
    np.savez(os.path.join(HERE, "tw_written_expected.npz"), **expected)


def write_saved_model():
    export_dir = os.path.join(HERE, "tw_saved_model")
    if os.path.exists(export_dir):
        shutil.rmtree(export_dir)
    tmp = tempfile.mkdtemp()
    vocab_path = os.path.join(tmp, "labels.txt")
    with open(vocab_path, "w") as f:
        f.write("cat\ndog\nbird\n")
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        with tf.variable_scope("model"):
            y = MODELS["mlp"][0](x)
        asset = tf.constant(vocab_path, name="labels_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        labels = tf.Variable("", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="labels")
        init = tf.group(tf.assign(labels, tf.read_file(asset)), name="init_labels")
        labels_out = tf.identity(labels, name="labels_out")
        value = RNG.uniform(-1, 1, size=[3, 6]).astype(np.float32)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(init)
            probs = sess.run(y, {x: value})
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            signatures = {
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                    tf.saved_model.signature_def_utils.predict_signature_def(
                        inputs={"x": x}, outputs={"probs": y, "labels": labels_out}),
                "probs_only": tf.saved_model.signature_def_utils.predict_signature_def(
                    inputs={"x": x}, outputs={"probs": y}),
            }
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING], signature_def_map=signatures,
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS), main_op=init,
                clear_devices=True)
            builder.save()
    shutil.rmtree(tmp)
    np.savez(os.path.join(HERE, "tw_saved_model_expected.npz"), x=value, probs=probs)


if __name__ == "__main__":
    write_frozen_graphs()
    write_saved_model()
