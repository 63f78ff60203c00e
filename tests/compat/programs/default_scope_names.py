"""Variable names of layer helpers written the TF1 way, `tf.variable_scope(name, default_name=...)`
around tf.get_variable: called twice at the top, inside a scope re-entered with reuse=True (the
weight sharing of towers and GAN discriminators), inside nested scopes, and through a captured
VariableScope object (regression: default names used to skip names whose variables existed, so
the reused scope asked for 'dense_2')."""
import numpy as np


def run(tf, workdir):
    def dense(x, units, name=None):
        with tf.variable_scope(name, default_name="dense"):
            w = tf.get_variable("kernel", [x.shape[-1], units], initializer=tf.ones_initializer())
            return tf.matmul(x, w)

    x = tf.ones([2, 3])
    top = [dense(x, 2), dense(x, 2)]
    with tf.variable_scope("disc") as disc_scope:
        first = dense(dense(x, 4), 1)
    with tf.variable_scope("disc", reuse=True):
        second = dense(dense(x * 2.0, 4), 1)
    with tf.variable_scope("outer"):
        with tf.variable_scope("inner"):
            dense(x, 1)
        with tf.variable_scope("inner", reuse=tf.AUTO_REUSE):
            dense(x, 1)
            dense(x, 1)
        with tf.variable_scope(None, default_name="block"):
            dense(x, 1)
        with tf.variable_scope(None, default_name="block"):
            dense(x, 1)
    with tf.variable_scope(disc_scope, reuse=True):
        third = dense(dense(x * 3.0, 4), 1)
    with tf.variable_scope(disc_scope, reuse=tf.AUTO_REUSE):
        dense(x, 4)
        dense(x, 5, name="named")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([first, second, third] + top)
    return {"variable_names": np.array([v.name for v in tf.global_variables()]),
            "outputs": np.concatenate([np.ravel(v) for v in values]).astype(np.float32)}
