"""Runs every program of tests/compat/programs under real TensorFlow 2.15.1 (TF1 graph mode through
tf.compat.v1 with v2 behaviour disabled) and records its results in tf_compat_expected.npz (keys
'<program>::<result>') and tf_compat_expected.json (which TF ran each program, with or without the
contrib shim, and its result names). It also writes tf_compat_layers_ckpt/, the checkpoint the
tf215_checkpoint program restores.

TF 2.x has no tf.contrib: programs that set USES_CONTRIB run with `tf.contrib` set to a shim built
from tf_slim (the maintained copy of contrib.layers / contrib.framework, same variable names) and
tf.compat.v1.nn.rnn_cell for contrib.rnn.

Run from the repository root:  /opt/tf215/bin/python tests/data/make_tf_compat_fixtures.py [names]
"""
import importlib
import json
import os
import shutil
import sys
import tempfile
import types

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow.compat.v1 as tf  # noqa: E402
import tf_slim  # noqa: E402
from tensorflow.python.framework import ops as tf_framework_ops  # noqa: E402
from tensorflow.python.ops import array_ops as tf_array_ops  # noqa: E402
from tensorflow.python.ops import control_flow_ops as tf_control_flow_ops  # noqa: E402

from tests.compat.programs import PROGRAMS  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data")


def contrib_shim():
    # tf_slim's batch_norm reaches tensorflow.python.layers.normalization, which in TF 2.15 lazily
    # imports the separate tf_keras package (not installed); point it at the same legacy class that
    # tf.compat.v1.layers.BatchNormalization is (keras 2.15's legacy_tf_layers).
    # tf_slim 1.1 still reaches some names where TF 1.x kept them (ops.Tensor, control_flow_ops.cond,
    # array_ops.stack, ...); TF 2.15 moved them. Put the public TF1 objects back where it looks.
    for module, name, value in ((tf_framework_ops, "Tensor", tf.Tensor),
                                (tf_framework_ops, "IndexedSlices", tf.IndexedSlices),
                                (tf_array_ops, "stack", tf.stack), (tf_array_ops, "unstack", tf.unstack),
                                (tf_control_flow_ops, "cond", tf.cond), (tf_control_flow_ops, "case", tf.case),
                                (tf_control_flow_ops, "while_loop", tf.while_loop),
                                (tf_control_flow_ops, "Assert", tf.Assert)):
        if not hasattr(module, name):
            setattr(module, name, value)
    sys.modules["tf_slim.layers.layers"].normalization_layers = types.SimpleNamespace(
        BatchNormalization=tf.layers.BatchNormalization)
    layers = types.SimpleNamespace(
        fully_connected=tf_slim.fully_connected, conv2d=tf_slim.conv2d, batch_norm=tf_slim.batch_norm,
        layer_norm=tf_slim.layer_norm, flatten=tf_slim.flatten, max_pool2d=tf_slim.max_pool2d,
        dropout=tf_slim.dropout, l2_regularizer=tf_slim.l2_regularizer, l1_regularizer=tf_slim.l1_regularizer,
        xavier_initializer=tf_slim.xavier_initializer,
        variance_scaling_initializer=tf_slim.variance_scaling_initializer,
        optimize_loss=tf_slim.optimize_loss, apply_regularization=tf_slim.apply_regularization)
    framework = types.SimpleNamespace(arg_scope=tf_slim.arg_scope, get_variables=tf_slim.get_variables,
                                      get_model_variables=tf_slim.get_model_variables)
    rnn = types.SimpleNamespace(
        BasicLSTMCell=tf.nn.rnn_cell.BasicLSTMCell, LSTMCell=tf.nn.rnn_cell.LSTMCell,
        GRUCell=tf.nn.rnn_cell.GRUCell, MultiRNNCell=tf.nn.rnn_cell.MultiRNNCell,
        DropoutWrapper=tf.nn.rnn_cell.DropoutWrapper, LSTMStateTuple=tf.nn.rnn_cell.LSTMStateTuple,
        static_bidirectional_rnn=tf.nn.static_bidirectional_rnn, static_rnn=tf.nn.static_rnn)
    return types.SimpleNamespace(layers=layers, framework=framework, rnn=rnn, slim=tf_slim)


def main(names):
    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    ckpt_dir = os.path.join(DATA, "tf_compat_layers_ckpt")
    if not names or "tf215_checkpoint" in names:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
        importlib.import_module("tests.compat.programs.tf215_checkpoint").write_checkpoint(tf, ckpt_dir)
        # The checkpoint file records absolute paths; keep it relative so it is valid where the repo is.
        with open(os.path.join(ckpt_dir, "checkpoint"), "w") as f:
            f.write('model_checkpoint_path: "model.ckpt-3"\nall_model_checkpoint_paths: "model.ckpt-3"\n')
    npz_path = os.path.join(DATA, "tf_compat_expected.npz")
    json_path = os.path.join(DATA, "tf_compat_expected.json")
    arrays = dict(np.load(npz_path)) if names and os.path.exists(npz_path) else {}
    meta = json.load(open(json_path)) if names and os.path.exists(json_path) else {}
    for name in names or PROGRAMS:
        module = importlib.import_module("tests.compat.programs." + name)
        uses_contrib = getattr(module, "USES_CONTRIB", False)
        tf.contrib = contrib_shim() if uses_contrib else None
        tf.reset_default_graph()
        workdir = tempfile.mkdtemp(prefix="compat_" + name + "_")
        try:
            results = module.run(tf, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        for key in [k for k in arrays if k.startswith(name + "::")]:
            del arrays[key]
        for key, value in results.items():
            arrays[name + "::" + key] = np.asarray(value)
        meta[name] = {"tensorflow": tf.__version__, "contrib_shim": "tf_slim 1.1.0"
                      if uses_contrib else None, "results": sorted(results)}
        print("%-28s %d results" % (name, len(results)), flush=True)
    np.savez(npz_path, **arrays)
    with open(json_path, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
