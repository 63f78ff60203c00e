"""A graph both make_tf_tracing_fixtures.py (under TensorFlow) and tests/profiler/test_profile_vs_tf.py
(under tensorweave) build: `tf` is passed in."""


def more_ops_model(tf):
    """The other ops TF registers FLOP counts for, with fully known shapes."""
    g = tf.Graph()
    with g.as_default():
        img = tf.placeholder(tf.float32, (2, 8, 8, 3), name="img")
        pooled = tf.nn.max_pool(img, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        avg = tf.nn.avg_pool(img, [1, 3, 3, 1], [1, 1, 1, 1], "SAME")
        v = tf.placeholder(tf.float32, (4, 5), name="v")
        tf.nn.softmax(v)
        tf.nn.l2_loss(v)
        tf.add_n([v, v, v])
        tf.math.rsqrt(v)
        tf.square(v)
        tf.math.log(v)
        tf.math.reciprocal(v)
        tf.maximum(v, 1.0)
        tf.math.squared_difference(v, v)
        tf.argmax(v, 1)
        bm = tf.placeholder(tf.float32, (3, 4, 5), name="bm")
        tf.matmul(bm, tf.placeholder(tf.float32, (3, 5, 2)))
        tf.matmul(v, tf.placeholder(tf.float32, (4, 6)), transpose_a=True)
        tf.gradients(tf.reduce_sum(pooled) + tf.reduce_sum(avg), img)
    return g
