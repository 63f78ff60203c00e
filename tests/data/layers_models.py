"""tf.layers models, written once against a `tf` module (TensorFlow 2.15's tf.compat.v1 in
make_tf215_layers_fixtures.py, tensorweave in tests/layers/): each case builds a graph under a
graph seed and says what to feed and fetch; `run_case` runs it the same way on both sides and
returns every recorded value under a flat name."""
import numpy as np

SEED = 1234


def _rng(name):
    return np.random.RandomState(sum(ord(c) for c in name))


def _reg(tf, scale):
    return lambda w: tf.multiply(scale, tf.nn.l2_loss(w))


def dense_stack(tf):
    x = tf.placeholder(tf.float32, [4, 5], name="x")
    h = tf.layers.dense(x, 8, activation=tf.nn.relu, kernel_regularizer=_reg(tf, 0.01),
                        bias_initializer=tf.constant_initializer(0.1))
    layer = tf.layers.Dense(3, bias_regularizer=_reg(tf, 0.5), activity_regularizer=_reg(tf, 0.001),
                            bias_initializer=tf.constant_initializer(0.2))
    y = layer(h)
    y2 = layer(h * 2.0)  # second call reuses the variables
    z = tf.layers.dense(tf.placeholder_with_default(np.ones([2, 3, 5], np.float32), [2, 3, 5]), 4,
                        activation="softmax")
    reg = tf.losses.get_regularization_loss()
    loss = tf.reduce_sum(tf.square(y)) + tf.reduce_sum(y2) + tf.reduce_sum(z) + reg
    return {x: _rng("dense").randn(4, 5).astype(np.float32)}, {"y": y, "y2": y2, "z": z, "reg": reg}, loss


def _conv_inputs(tf, shape, name):
    value = _rng(name).randn(*shape).astype(np.float32)
    return tf.placeholder(tf.float32, shape, name=name), value


def convolutions(tf):
    feeds, fetches = {}, {}
    cases = [
        ("conv1d", (2, 9, 3), lambda t: tf.layers.conv1d(t, 4, 3, strides=2, padding="same", activation=tf.nn.relu)),
        ("conv1d_dilated", (2, 9, 3), lambda t: tf.layers.conv1d(t, 2, 2, dilation_rate=3)),
        ("conv1d_causal", (2, 9, 3), lambda t: tf.layers.conv1d(t, 3, 3, padding="causal", dilation_rate=2,
                                                                activation="relu")),
        ("separable_conv1d_causal", (2, 8, 3), lambda t: tf.layers.separable_conv1d(t, 2, 2, padding="causal")),
        ("conv2d", (2, 7, 6, 3), lambda t: tf.layers.conv2d(t, 4, (3, 2), strides=(2, 1), padding="same")),
        ("conv2d_dilated", (2, 8, 8, 2), lambda t: tf.layers.conv2d(t, 3, 3, dilation_rate=2, use_bias=False)),
        ("conv3d", (2, 5, 6, 4, 2), lambda t: tf.layers.conv3d(t, 3, (2, 3, 2), strides=(1, 2, 1), padding="same")),
        ("conv3d_valid", (1, 5, 5, 5, 2), lambda t: tf.layers.conv3d(t, 2, 3, activation=tf.nn.tanh)),
        ("conv2d_transpose", (2, 4, 3, 3), lambda t: tf.layers.conv2d_transpose(t, 2, 3, strides=2, padding="same")),
        ("conv2d_transpose_valid", (2, 4, 3, 3), lambda t: tf.layers.conv2d_transpose(t, 2, (3, 2), strides=(2, 3))),
        ("conv3d_transpose", (1, 3, 2, 3, 2), lambda t: tf.layers.conv3d_transpose(t, 3, 2, strides=2, padding="same")),
        ("conv3d_transpose_valid", (1, 3, 2, 3, 2), lambda t: tf.layers.conv3d_transpose(t, 2, 3, strides=(1, 2, 1))),
        ("separable_conv1d", (2, 8, 3), lambda t: tf.layers.separable_conv1d(t, 4, 3, depth_multiplier=2,
                                                                             padding="same")),
        ("separable_conv2d", (2, 7, 7, 3), lambda t: tf.layers.separable_conv2d(t, 5, 3, strides=2,
                                                                                depth_multiplier=2)),
        ("separable_conv2d_dilated", (1, 8, 8, 2), lambda t: tf.layers.separable_conv2d(
            t, 3, 2, dilation_rate=2, padding="same", activation=tf.nn.relu)),
    ]
    total = 0.0
    for name, shape, build in cases:
        x, value = _conv_inputs(tf, shape, name)
        feeds[x] = value
        y = build(x)
        fetches[name] = y
        total = total + tf.reduce_sum(y * y)
    return feeds, fetches, total


def poolings(tf):
    feeds, fetches = {}, {}
    cases = [
        ("max_pooling1d", (2, 9, 3), lambda t: tf.layers.max_pooling1d(t, 3, 2, padding="same")),
        ("average_pooling1d", (2, 9, 3), lambda t: tf.layers.average_pooling1d(t, 2, 2)),
        ("max_pooling2d", (2, 7, 6, 3), lambda t: tf.layers.max_pooling2d(t, (3, 2), (2, 2), padding="same")),
        ("average_pooling2d", (2, 7, 6, 3), lambda t: tf.layers.average_pooling2d(t, 3, 2, padding="same")),
        ("max_pooling3d", (2, 5, 6, 4, 2), lambda t: tf.layers.max_pooling3d(t, 2, 2)),
        ("max_pooling3d_same", (1, 5, 5, 3, 2), lambda t: tf.layers.max_pooling3d(t, 3, (2, 2, 1), padding="same")),
        ("average_pooling3d", (2, 5, 6, 4, 2), lambda t: tf.layers.average_pooling3d(t, 3, 2, padding="same")),
        ("average_pooling3d_nchw", (1, 2, 5, 4, 4), lambda t: tf.layers.average_pooling3d(
            t, 2, 2, data_format="channels_first")),
        ("max_pooling3d_nchw", (1, 2, 5, 4, 4), lambda t: tf.layers.MaxPooling3D(
            2, 1, data_format="channels_first", padding="same")(t)),
        ("flatten", (2, 3, 4, 2), lambda t: tf.layers.flatten(t)),
    ]
    total = 0.0
    for name, shape, build in cases:
        x, value = _conv_inputs(tf, shape, name)
        feeds[x] = value
        y = build(x)
        fetches[name] = y
        total = total + tf.reduce_sum(y * y)
    return feeds, fetches, total


def channels_first(tf):
    """The channels_first layers TensorFlow's CPU kernels run (the others need a GPU in TF; they
    are checked against channels_last in tests/layers/test_data_formats.py)."""
    feeds, fetches = {}, {}
    cases = [
        ("average_pooling1d", (2, 3, 7), lambda t: tf.layers.average_pooling1d(t, 2, 2, data_format="channels_first")),
        ("conv2d_transpose", (2, 3, 4, 3), lambda t: tf.layers.conv2d_transpose(
            t, 2, 3, strides=2, padding="same", data_format="channels_first")),
        ("flatten", (2, 3, 4, 2), lambda t: tf.layers.flatten(t, data_format="channels_first")),
    ]
    total = 0.0
    for name, shape, build in cases:
        x, value = _conv_inputs(tf, shape, name)
        feeds[x] = value
        y = build(x)
        fetches[name] = y
        total = total + tf.reduce_sum(y * y)
    return feeds, fetches, total


def batch_norms(tf):
    feeds, fetches = {}, {}
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    cases = [
        ("bn_fused", (4, 3, 3, 2), lambda t: tf.layers.batch_normalization(t, training=True, momentum=0.9)),
        ("bn_unfused", (4, 3, 3, 2), lambda t: tf.layers.batch_normalization(t, training=True, fused=False)),
        ("bn_dense", (6, 3), lambda t: tf.layers.batch_normalization(t, training=is_training, momentum=0.8,
                                                                     epsilon=0.01)),
        ("bn_fused_tensor", (4, 2, 3, 3), lambda t: tf.layers.batch_normalization(
            t, axis=1, training=is_training, momentum=0.5)),
        ("bn_5d", (2, 3, 2, 2, 3), lambda t: tf.layers.batch_normalization(t, training=True, center=False)),
        ("bn_inference", (4, 3, 3, 2), lambda t: tf.layers.batch_normalization(
            t, training=False, scale=False, moving_mean_initializer=tf.constant_initializer(0.5),
            moving_variance_initializer=tf.constant_initializer(2.0))),
        ("bn_axis1_3d", (5, 3, 4), lambda t: tf.layers.BatchNormalization(axis=1, momentum=0.7)(t, training=True)),
    ]
    total = 0.0
    for name, shape, build in cases:
        x, value = _conv_inputs(tf, shape, name)
        feeds[x] = value * 2.0 + 0.5
        y = build(x)
        fetches[name] = y
        total = total + tf.reduce_sum(tf.reshape(y * y, [-1]) * tf.cast(tf.range(tf.size(y)), tf.float32) / 10.0)
    feeds[is_training] = True
    return feeds, fetches, total


def dropouts(tf):
    x = tf.placeholder(tf.float32, [3, 4, 5], name="x")
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    layer = tf.layers.Dropout(0.4, seed=7)
    fetches = {
        "seeded": tf.layers.dropout(x, 0.3, seed=11, training=True),
        "graph_seed": tf.layers.dropout(x, 0.5, training=True),
        "layer_call1": layer(x, training=True),
        "layer_call2": layer(x, training=True),
        "tensor_training": tf.layers.dropout(x, 0.25, training=is_training),
        "noise_shape": tf.layers.dropout(x, 0.5, noise_shape=[3, 1, 5], training=True),
        "not_training": tf.layers.dropout(x, 0.5),
    }
    loss = tf.reduce_sum(fetches["seeded"] * fetches["graph_seed"])
    return {x: _rng("dropout").rand(3, 4, 5).astype(np.float32) + 1.0, is_training: True}, fetches, loss


def small_cnn(tf, x, is_training):
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                         kernel_regularizer=lambda w: 0.001 * tf.reduce_sum(tf.square(w)))
    h = tf.layers.batch_normalization(h, training=is_training, momentum=0.9)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dropout(h, 0.3, training=is_training, seed=5)
    h = tf.layers.flatten(h)
    return tf.layers.dense(h, 3)


def training(tf):
    """Three GradientDescent steps of a small CNN with batch norm and dropout; the train op
    depends on UPDATE_OPS, as TF's documentation says it must."""
    x = tf.placeholder(tf.float32, [6, 6, 6, 2], name="x")
    labels = tf.placeholder(tf.int32, [6], name="labels")
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    logits = small_cnn(tf, x, is_training)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    loss = loss + tf.losses.get_regularization_loss()
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    rng = _rng("training")
    feeds = {x: rng.randn(6, 6, 6, 2).astype(np.float32), labels: rng.randint(0, 3, 6).astype(np.int32)}
    return feeds, {"logits": logits, "loss": loss}, loss, {"train_op": train_op, "steps": 3,
                                                           "train_feed": {is_training: True}}


def towers(tf):
    """Two towers sharing weights: the second pass re-enters the scope with reuse=True."""
    x = tf.placeholder(tf.float32, [2, 5, 5, 2], name="x")

    def tower(t):
        t = tf.layers.conv2d(t, 3, 3, activation=tf.nn.relu)
        t = tf.layers.conv2d(t, 2, 2)
        return tf.layers.dense(tf.layers.flatten(t), 2)

    with tf.variable_scope("ConvNet"):
        a = tower(x)
    with tf.variable_scope("ConvNet", reuse=True):
        b = tower(x * 0.5)
    return {x: _rng("towers").randn(2, 5, 5, 2).astype(np.float32)}, {"a": a, "b": b}, tf.reduce_sum(a * b)


def checkpoint_model(tf, x, training=False):
    """The model of the TF-written checkpoint: conv2d + batch_normalization + dense."""
    h = tf.layers.conv2d(x, 3, 3, activation=tf.nn.relu)
    h = tf.layers.batch_normalization(h, training=training)
    return tf.layers.dense(tf.layers.flatten(h), 4)


CASES = {"dense_stack": dense_stack, "convolutions": convolutions, "poolings": poolings,
         "channels_first": channels_first,
         "batch_norms": batch_norms, "dropouts": dropouts, "training": training, "towers": towers}


def run_case(tf, name):
    """{recorded name: value} for case `name`: variables (names, shapes, initial values),
    fetched outputs, gradients of the case's loss, variables after the update ops (or after
    the training steps)."""
    out = {}
    with tf.Graph().as_default():
        tf.set_random_seed(SEED)
        built = CASES[name](tf)
        feeds, fetches, loss = built[:3]
        extra = built[3] if len(built) > 3 else None
        variables = tf.global_variables()
        trainable = tf.trainable_variables()
        out["__variables__"] = [[v.op.name, v.shape.as_list(), any(v is t for t in trainable)] for v in variables]
        grads = tf.gradients(loss, tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for v, value in zip(variables, sess.run(variables)):
                out[f"init/{v.op.name}"] = value
            values = sess.run(fetches, feeds)
            out.update({f"out/{k}": v for k, v in values.items()})
            out["loss"] = sess.run(loss, feeds)
            for v, g in zip(tf.trainable_variables(), sess.run(grads, feeds)):
                out[f"grad/{v.op.name}"] = g
            updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
            out["__updates__"] = len(updates)
            if extra is not None:
                train_feeds = dict(feeds)
                train_feeds.update(extra["train_feed"])
                losses = []
                for _ in range(extra["steps"]):
                    losses.append(sess.run([loss, extra["train_op"]], train_feeds)[0])
                out["train_losses"] = np.array(losses)
                out.update({f"eval/{k}": v for k, v in sess.run(fetches, feeds).items()})
            elif updates:
                sess.run(updates, feeds)
            for v, value in zip(variables, sess.run(variables)):
                out[f"final/{v.op.name}"] = value
    return out
