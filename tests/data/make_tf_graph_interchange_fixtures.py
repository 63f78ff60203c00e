"""Records GraphDef, frozen-graph and SavedModel fixtures with real TensorFlow (run with
/opt/tfref/bin/python, TF 2.21 in TF1 graph mode), and checks the files tensorweave wrote.

Default mode writes:
- tests/data/tf_graphs/{mlp,cnn,lstm}.pb: frozen GraphDefs (convert_variables_to_constants)
  of three model programs, mlp.pbtxt the MLP's frozen graph in text format (tf.io.write_graph);
- tests/data/tf_graphs_expected.npz: each model's input and TF's output for it;
- tests/data/tf_graph_util_expected.json: a small GraphDef (text format) and what TF's
  graph_util.extract_sub_graph / remove_training_nodes / must_run_on_cpu make of it;
- tests/data/tf_saved_model/: a SavedModel (simple_save, serve tag, predict signature) of an
  MLP with an asset file that its main op reads, and tf_saved_model_expected.npz.

`--check` mode loads what tensorweave wrote (tests/data/tw_written/*.pb with
tw_written_expected.npz, and the SavedModel tests/data/tw_saved_model/), runs it in TensorFlow
and records TF's outputs and the largest difference from ours in tests/data/tw_checked_by_tf.json.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf
from google.protobuf import text_format

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interchange_models import models  # noqa: E402

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.RandomState(12)


MODELS = models(tf, RNG)


def write_frozen_graphs():
    out_dir = os.path.join(HERE, "tf_graphs")
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
        if name == "mlp":
            tf.io.write_graph(frozen, out_dir, "mlp.pbtxt", as_text=True)
        with tf.Graph().as_default():  # the frozen graph alone gives the same numbers
            tf.import_graph_def(frozen, name="")
            with tf.Session() as sess:
                again = sess.run("output:0", {"input:0": expected[f"{name}/input"]})
        np.testing.assert_allclose(again, expected[f"{name}/output"], rtol=1e-6)
        print(name, "ops:", sorted({n.op for n in frozen.node}))
    np.savez(os.path.join(HERE, "tf_graphs_expected.npz"), **expected)


def write_graph_util_cases():
    with tf.Graph().as_default() as graph:
        a = tf.placeholder(tf.float32, [2, 3], name="a")
        b = tf.constant(np.ones([2, 3], np.float32), name="b")
        s = tf.add(a, b, name="sum")
        checked = tf.debugging.check_numerics(s, "bad", name="check")
        # TF drops a removed CheckNumerics from its consumers' inputs: it is meant to be
        # reached through control edges (as tf.add_check_numerics_ops adds it)
        with tf.control_dependencies([checked]):
            i1 = tf.identity(s, name="id1")
        i2 = tf.identity(i1, name="id2")
        i3 = tf.identity(tf.identity(i2, name="id3a"), name="id3b")
        with tf.control_dependencies([i3]):
            guarded = tf.multiply(i2, 2.0, name="guarded")
        kept = tf.identity(guarded, name="kept")
        out = tf.square(kept, name="out")
        tf.reduce_sum(a, name="unused")
        tf.constant(3, name="int_const")
        tf.constant("s", name="str_const")
        tf.cast(tf.constant(1, tf.int32), tf.float32, name="cast_int")
        tf.cast(tf.constant(1.0), tf.int32, name="cast_float")
        graph_def = graph.as_graph_def()
        del out

    def listing(gd):
        return [[n.name, n.op, list(n.input)] for n in gd.node]

    cases = {
        "graph_def": text_format.MessageToString(graph_def),
        "extract_out": listing(tf.graph_util.extract_sub_graph(graph_def, ["out"])),
        "extract_sum_unused": listing(tf.graph_util.extract_sub_graph(graph_def, ["sum", "unused"])),
        "remove_training": listing(tf.graph_util.remove_training_nodes(graph_def)),
        "remove_training_protected": listing(tf.graph_util.remove_training_nodes(graph_def, ["id2", "check"])),
        "must_run_on_cpu": {n.name: bool(tf.graph_util.must_run_on_cpu(n)) for n in graph_def.node},
    }
    with open(os.path.join(HERE, "tf_graph_util_expected.json"), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)


def write_saved_model():
    export_dir = os.path.join(HERE, "tf_saved_model")
    if os.path.exists(export_dir):
        shutil.rmtree(export_dir)
    tmp = tempfile.mkdtemp()
    vocab_path = os.path.join(tmp, "vocab.txt")
    with open(vocab_path, "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        with tf.variable_scope("model"):
            y = MODELS["mlp"][0](x)
        asset = tf.constant(vocab_path, name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        vocab = tf.Variable("", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="vocab")
        init = tf.group(tf.assign(vocab, tf.read_file(asset)), name="init_vocab")
        vocab_out = tf.identity(vocab, name="vocab_out")
        value = RNG.uniform(-1, 1, size=[3, 6]).astype(np.float32)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(init)
            probs = sess.run(y, {x: value})
            tf.saved_model.simple_save(sess, export_dir, inputs={"x": x},
                                       outputs={"probs": y, "vocab": vocab_out}, legacy_init_op=init)
    shutil.rmtree(tmp)
    np.savez(os.path.join(HERE, "tf_saved_model_expected.npz"), x=value, probs=probs)
    with tf.Graph().as_default(), tf.Session() as sess:  # TF reads its own export back
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["probs"].name, {sig.inputs["x"].name: value})
        np.testing.assert_allclose(got, probs, rtol=1e-6)
        print("tf_saved_model vocab:", sess.run(sig.outputs["vocab"].name))


def check_ours():
    report = {"tensorflow_version": tf.__version__, "graphs": {}, "saved_model": {}}
    written = os.path.join(HERE, "tw_written")
    ours = np.load(os.path.join(HERE, "tw_written_expected.npz"))
    for name in sorted(f[:-3] for f in os.listdir(written) if f.endswith(".pb")):
        graph_def = tf.GraphDef()
        with open(os.path.join(written, name + ".pb"), "rb") as f:
            graph_def.ParseFromString(f.read())
        with tf.Graph().as_default():
            tf.import_graph_def(graph_def, name="")
            with tf.Session() as sess:
                got = sess.run("output:0", {"input:0": ours[f"{name}/input"]})
        report["graphs"][name] = {"output": got.tolist(),
                                  "max_abs_diff": float(np.max(np.abs(got - ours[f"{name}/output"])))}
    export_dir = os.path.join(HERE, "tw_saved_model")
    sm = np.load(os.path.join(HERE, "tw_saved_model_expected.npz"))
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
        sig = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        fetches = {k: v.name for k, v in sig.outputs.items()}
        got = sess.run(fetches, {sig.inputs["x"].name: sm["x"]})
        report["saved_model"] = {
            "method_name": sig.method_name,
            "tags": list(meta.meta_info_def.tags),
            "outputs": {k: (v.decode() if isinstance(v, bytes) else v.tolist()) for k, v in got.items()},
            "max_abs_diff": float(np.max(np.abs(got["probs"] - sm["probs"]))),
        }
    with open(os.path.join(HERE, "tw_checked_by_tf.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    print(json.dumps({k: v.get("max_abs_diff") for k, v in report["graphs"].items()}),
          report["saved_model"]["max_abs_diff"], report["saved_model"]["outputs"].get("vocab"))


if __name__ == "__main__":
    if "--check" in sys.argv:
        check_ours()
    else:
        write_frozen_graphs()
        write_graph_util_cases()
        write_saved_model()
