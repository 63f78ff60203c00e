"""Writes tests/data/tf215_contrib_expected.json: what TF 1.x's tf.contrib.layers / framework
compute, recorded from tf_slim (the maintained copy of contrib.layers and contrib.framework, same
variable names and defaults) on TensorFlow 2.15.1, plus tf.nn.rnn_cell.LSTMCell runs that
contrib.rnn.LSTMBlockCell must match. tests/contrib/ compares tensorweave against it.

Run with real TensorFlow, never imported by the tests:
`/opt/tf215/bin/python tests/data/make_tf215_contrib_fixtures.py tests/data`.

Every random draw has a graph seed and an op seed, so the numbers are reproducible."""
import json
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.framework import ops as _tf_ops  # noqa: E402

# tf_slim still asks for ops.Tensor and ops.IndexedSlices, which TF 2.15 no longer defines there.
for _name in ("Tensor", "IndexedSlices"):
    if not hasattr(_tf_ops, _name):
        setattr(_tf_ops, _name, getattr(tf, _name))
import tf_slim as slim  # noqa: E402

tf.disable_v2_behavior()

X_FC = (np.arange(20, dtype=np.float32).reshape(4, 5) - 7.0) / 6.0
X_IMG = np.sin(np.arange(2 * 6 * 6 * 3, dtype=np.float32)).reshape(2, 6, 6, 3)
X_SEQ = np.cos(np.arange(3 * 4 * 5, dtype=np.float32) * 0.7).reshape(3, 4, 5)


def listed(values):
    return {k: np.asarray(v).tolist() for k, v in values.items()}


def names(collection):
    return [v.name for v in tf.get_collection(collection)]


def initializers(out):
    cases = {
        "xavier_uniform": lambda: slim.xavier_initializer(seed=11),
        "xavier_normal": lambda: slim.xavier_initializer(uniform=False, seed=12),
        "vs_default": lambda: slim.variance_scaling_initializer(seed=13),
        "vs_fan_out_uniform": lambda: slim.variance_scaling_initializer(factor=1.5, mode="FAN_OUT", uniform=True,
                                                                        seed=14),
        "vs_fan_avg": lambda: slim.variance_scaling_initializer(factor=0.5, mode="FAN_AVG", seed=15),
    }
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        ops = {}
        for name, make in cases.items():
            ops[name + "_2d"] = make()([3, 4])
            ops[name + "_4d"] = make()([2, 2, 3, 4])
        with tf.Session() as sess:
            out["initializers"] = listed(sess.run(ops))


def regularizers(out):
    with tf.Graph().as_default():
        w = tf.constant([[1.0, -2.0], [0.5, -0.25]])
        v = tf.constant([3.0, -1.0])
        ops = {
            "l1": slim.l1_regularizer(0.3)(w),
            "l2": slim.l2_regularizer(0.2)(w),
            "l1_l2": slim.l1_l2_regularizer(0.3, 0.2)(w),
            "sum": slim.sum_regularizer([slim.l1_regularizer(0.1), None, slim.l2_regularizer(0.4)])(w),
            "apply": slim.apply_regularization(slim.l2_regularizer(0.5), [w, v]),
        }
        names_ = {k: t.name for k, t in ops.items()}
        with tf.Session() as sess:
            out["regularizers"] = {"values": listed(sess.run(ops)), "names": names_,
                                   "losses": names(tf.GraphKeys.REGULARIZATION_LOSSES)}


def layers(out):
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x = tf.constant(X_FC)
        fc = slim.fully_connected(x, 3, weights_initializer=slim.xavier_initializer(seed=21),
                                  biases_initializer=tf.constant_initializer(0.1),
                                  weights_regularizer=slim.l2_regularizer(0.01))
        fc_none = slim.fully_connected(x, 2, activation_fn=None, scope="linear",
                                       weights_initializer=slim.xavier_initializer(seed=22))
        fc3 = slim.fully_connected(tf.constant(X_SEQ), 2, activation_fn=tf.nn.tanh, scope="fc3",
                                   weights_initializer=slim.xavier_initializer(seed=23))
        conv = slim.conv2d(tf.constant(X_IMG), 4, [3, 3], stride=2,
                           weights_initializer=slim.xavier_initializer(seed=24),
                           biases_initializer=tf.constant_initializer(-0.05))
        conv_valid = slim.conv2d(tf.constant(X_IMG), 2, 3, padding="VALID", rate=2, activation_fn=None,
                                 weights_initializer=slim.variance_scaling_initializer(seed=25), scope="dil")
        flat = slim.flatten(conv)
        ln = slim.layer_norm(tf.constant(X_SEQ) * 3.0 + 1.0)
        ln_last = slim.layer_norm(tf.constant(X_SEQ), begin_norm_axis=-1, scope="ln_last")
        with slim.arg_scope([slim.fully_connected, slim.conv2d], activation_fn=tf.nn.sigmoid,
                            weights_initializer=slim.xavier_initializer(seed=26),
                            weights_regularizer=slim.l1_regularizer(0.02)):
            scoped_conv = slim.conv2d(tf.constant(X_IMG), 2, 1, scope="scoped_conv")
            scoped_fc = slim.fully_connected(x, 2, scope="scoped_fc")
        fc_bn = slim.fully_connected(x, 3, normalizer_fn=slim.batch_norm,
                                     normalizer_params={"scale": True, "updates_collections": None},
                                     weights_initializer=slim.xavier_initializer(seed=27), scope="fc_bn")
        ops = {"fc": fc, "fc_none": fc_none, "fc3": fc3, "conv": conv, "conv_valid": conv_valid, "flat": flat,
               "ln": ln, "ln_last": ln_last, "scoped_conv": scoped_conv, "scoped_fc": scoped_fc, "fc_bn": fc_bn}
        reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(ops)
            values["regularization"] = sess.run(tf.add_n(reg))
            fc_weights = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "fully_connected/weights")[0]
            values["fc_weights"] = sess.run(fc_weights)
            out["layers"] = {"values": listed(values),
                             "global_variables": names(tf.GraphKeys.GLOBAL_VARIABLES),
                             "model_variables": names(tf.GraphKeys.MODEL_VARIABLES),
                             "trainable_variables": names(tf.GraphKeys.TRAINABLE_VARIABLES),
                             "regularization_losses": [t.name for t in reg],
                             "static_shapes": {k: t.shape.as_list() for k, t in ops.items()}}


def more_layers(out):
    """1-D convolution, pooling, dropout, repeat and stack."""
    with tf.Graph().as_default():
        tf.set_random_seed(9)
        img = tf.constant(X_IMG)
        ops = {
            "conv1d": slim.convolution(tf.constant(X_SEQ), 3, 2, stride=2, scope="conv1d",
                                       weights_initializer=slim.xavier_initializer(seed=31)),
            "conv1d_dilated": slim.convolution(tf.constant(X_SEQ), 2, 2, rate=2, padding="VALID", scope="conv1d_dil",
                                               weights_initializer=slim.xavier_initializer(seed=32)),
            "max_pool": slim.max_pool2d(img, [2, 2]),
            "max_pool_same": slim.max_pool2d(img, 3, stride=2, padding="SAME"),
            "avg_pool": slim.avg_pool2d(img, [3, 2], stride=[1, 2]),
            "avg_pool_same": slim.avg_pool2d(img, 3, stride=2, padding="SAME"),
            "dropout": slim.dropout(img, 0.7, seed=33),
            "dropout_noise_shape": slim.dropout(img, 0.4, noise_shape=[2, 1, 1, 3], seed=34),
            "dropout_eval": slim.dropout(img, 0.7, is_training=False),
            "repeat": slim.repeat(img, 2, slim.conv2d, 3, [3, 3], scope="rep",
                                  weights_initializer=slim.xavier_initializer(seed=35)),
            "stack": slim.stack(tf.constant(X_FC), slim.fully_connected, [4, 3, 2], scope="fc_stack",
                                weights_initializer=slim.xavier_initializer(seed=36)),
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["more_layers"] = {"values": listed(sess.run(ops)),
                                  "global_variables": names(tf.GraphKeys.GLOBAL_VARIABLES),
                                  "static_shapes": {k: t.shape.as_list() for k, t in ops.items()},
                                  "op_names": {k: t.op.name for k, t in ops.items() if "pool" in k}}


def batch_norm_case(kwargs, x, steps):
    """tf_slim hands the default updates_collections (the very string UPDATE_OPS) on rank-4
    inputs to a Keras layer, which needs tf_keras (not installed); a list holding UPDATE_OPS
    takes TF 1.15's own code path (fused for rank 2 and 4, moments otherwise), with the same
    arithmetic and the update ops in the same collection."""
    kwargs = dict(kwargs)
    kwargs.setdefault("updates_collections", [tf.GraphKeys.UPDATE_OPS])
    with tf.Graph().as_default():
        out = slim.batch_norm(tf.constant(x), **kwargs)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        mm = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "BatchNorm/moving_mean")[0]
        mv = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "BatchNorm/moving_variance")[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                y, _ = sess.run([out, updates])
            return {"y": y.tolist(), "moving_mean": sess.run(mm).tolist(), "moving_variance": sess.run(mv).tolist(),
                    "variables": names(tf.GraphKeys.GLOBAL_VARIABLES),
                    "trainable": names(tf.GraphKeys.TRAINABLE_VARIABLES),
                    "n_update_ops": len(updates)}


def batch_norms(out):
    x4 = X_IMG * 2.0 + 0.3
    x2 = X_FC * 1.5 - 0.2
    x3 = X_SEQ + 0.5
    out["batch_norm"] = {
        "default": batch_norm_case({}, x4, 2),
        "scale_decay": batch_norm_case({"scale": True, "decay": 0.9, "epsilon": 0.01}, x4, 2),
        "in_place": batch_norm_case({"updates_collections": None, "decay": 0.5}, x4, 2),
        "rank2": batch_norm_case({"decay": 0.8, "scale": True}, x2, 2),
        "rank3": batch_norm_case({"decay": 0.8}, x3, 2),
        "not_fused": batch_norm_case({"fused": False, "decay": 0.7}, x4, 2),
        "inference": batch_norm_case({"is_training": False, "center": False}, x4, 1),
        "zero_debias": batch_norm_case({"zero_debias_moving_mean": True, "decay": 0.9}, x4, 2),
    }


def optimize(out):
    results = {}
    for name, kwargs in {
        "SGD": {"optimizer": "SGD"},
        "Adam": {"optimizer": "Adam"},
        "Adagrad": {"optimizer": "Adagrad"},
        "Momentum": {"optimizer": "Momentum"},
        "RMSProp": {"optimizer": "RMSProp"},
        "Ftrl": {"optimizer": "Ftrl"},
        "clip": {"optimizer": "SGD", "clip_gradients": 0.5},
        "decay": {"optimizer": "SGD",
                  "learning_rate_decay_fn": lambda lr, gs: tf.train.exponential_decay(lr, gs, 1, 0.5)},
        "class": {"optimizer": tf.train.MomentumOptimizer, "learning_rate": None},
        "multipliers": {"optimizer": "SGD", "gradient_multipliers": {"w:0": 3.0}},
    }.items():
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", initializer=tf.constant([[0.5], [-1.0], [2.0]]))
            b = tf.get_variable("b", initializer=tf.constant([0.1]))
            x = tf.constant(X_FC[:, :3])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - 1.0))
            kwargs = dict(kwargs)
            lr = kwargs.pop("learning_rate", 0.1)
            if name == "class":
                kwargs["optimizer"] = lambda: tf.train.MomentumOptimizer(0.05, 0.5)
                lr = None
            train = slim.optimize_loss(loss, gs, lr, summaries=[], **kwargs)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                losses = [float(sess.run(train)) for _ in range(3)]
                results[name] = {"losses": losses, "w": sess.run(w).tolist(), "b": sess.run(b).tolist(),
                                 "global_step": int(sess.run(gs)),
                                 "variables": names(tf.GraphKeys.GLOBAL_VARIABLES)}
    out["optimize_loss"] = results


def optimize_summaries(out):
    """optimize_loss's summaries: names and types of the summary ops, and their values after
    one step, for the default list (with decay and clipping) and the per-variable ones."""
    results = {}
    for name, kwargs in {
        "default": {"summaries": None, "clip_gradients": 0.5,
                    "learning_rate_decay_fn": lambda lr, gs: tf.train.exponential_decay(lr, gs, 1, 0.5)},
        "per_variable": {"summaries": ["gradients", "gradient_norm", "loss"]},
    }.items():
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", initializer=tf.constant([[0.5], [-1.0], [2.0]]))
            b = tf.get_variable("b", initializer=tf.constant([0.1]))
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X_FC[:, :3]), w) + b - 1.0))
            train = slim.optimize_loss(loss, gs, 0.1, "SGD", **kwargs)
            ops = tf.get_collection(tf.GraphKeys.SUMMARIES)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                values = sess.run(ops)
                sess.run(train)
            tags = []
            for v in values:
                summary = tf.Summary.FromString(v)
                tags += [[x.tag, x.WhichOneof("value"),
                          x.simple_value if x.HasField("simple_value") else x.histo.sum] for x in summary.value]
            results[name] = {"ops": [[t.op.name, t.op.type] for t in ops], "values": tags}
    out["optimize_loss_summaries"] = results


def lstm(out):
    """tf.nn.rnn_cell.LSTMCell runs with fixed weights: the arithmetic LSTMBlockCell must match."""
    rng = np.random.RandomState(3)
    inputs = rng.uniform(-1, 1, (2, 4, 3)).astype(np.float32)
    cases = {}
    for name, kwargs in {"plain": {}, "peephole_clip": {"use_peepholes": True, "cell_clip": 0.3,
                                                        "forget_bias": 0.5}}.items():
        with tf.Graph().as_default():
            cell = tf.nn.rnn_cell.LSTMCell(5, **kwargs)
            outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(inputs), dtype=tf.float32)
            weights = {}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for v in tf.global_variables():
                    value = rng.uniform(-0.8, 0.8, v.shape.as_list()).astype(np.float32)
                    v.load(value, sess)
                    weights[v.op.name.split("/")[-1]] = value.tolist()
                o, s = sess.run([outputs, state])
            cases[name] = {"weights": weights, "outputs": o.tolist(), "c": s.c.tolist(), "h": s.h.tolist()}
    out["lstm"] = {"inputs": inputs.tolist(), "cases": cases}


def main(folder):
    out = {}
    initializers(out)
    regularizers(out)
    layers(out)
    more_layers(out)
    batch_norms(out)
    optimize(out)
    optimize_summaries(out)
    lstm(out)
    with open(os.path.join(folder, "tf215_contrib_expected.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
