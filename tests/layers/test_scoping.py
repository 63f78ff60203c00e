"""tf.layers under variable scopes re-entered with reuse=True / AUTO_REUSE, default-named
sub-scopes and make_template: op and variable names as TF 2.15's tf.compat.v1 gives them
(recorded by hand, issue 11)."""
import tensorweave as tf


def test_names_under_reused_scopes_and_templates():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        outs = []
        for _ in range(2):
            with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
                outs.append(tf.layers.dense(x, 3).name)
                outs.append(tf.layers.dense(x, 3).name)
        with tf.variable_scope("m"):
            with tf.variable_scope(None, default_name="blk"):
                outs.append(tf.layers.dense(x, 2).name)
            with tf.variable_scope(None, default_name="blk"):
                outs.append(tf.layers.dense(x, 2).name)
        with tf.variable_scope("m", reuse=True):
            with tf.variable_scope(None, default_name="blk"):
                outs.append(tf.layers.dense(x, 2).name)
        template = tf.make_template("tmpl", lambda t: tf.layers.dense(t, 2))
        outs.append(template(x).name)
        outs.append(template(x).name)
        assert outs == ["s/dense/BiasAdd:0", "s/dense_1/BiasAdd:0", "s_1/dense/BiasAdd:0", "s_1/dense_1/BiasAdd:0",
                        "m/blk/dense/BiasAdd:0", "m/blk_1/dense/BiasAdd:0", "m_1/blk/dense/BiasAdd:0",
                        "tmpl/dense/BiasAdd:0", "tmpl_1/dense/BiasAdd:0"]
        assert [v.op.name for v in tf.global_variables()] == [
            "s/dense/kernel", "s/dense/bias", "s/dense_1/kernel", "s/dense_1/bias", "m/blk/dense/kernel",
            "m/blk/dense/bias", "m/blk_1/dense/kernel", "m/blk_1/dense/bias", "tmpl/dense/kernel", "tmpl/dense/bias"]
