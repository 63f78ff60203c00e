"""A program that checks tf.__version__ / tf.VERSION the way scripts gate on TF1 and reaches the API
through tf.compat.v1 (placeholder, layers-free variables, Session, train)."""
import numpy as np


def run(tf, workdir):
    major = int(tf.__version__.split(".")[0])
    v1 = tf.compat.v1
    v1.set_random_seed(19)
    x = v1.placeholder(v1.float32, [None, 3], name="x")
    w = v1.get_variable("w", [3, 2], initializer=v1.glorot_uniform_initializer())
    y = v1.nn.relu(v1.matmul(x, w))
    loss = v1.reduce_sum(y)
    train = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        before = sess.run(y, {x: np.ones((2, 3), np.float32)})
        sess.run(train, {x: np.ones((2, 3), np.float32)})
        after = sess.run(w)
    return {"version_is_string": np.bool_(isinstance(tf.__version__, str)),
            "version_major_at_least_1": np.bool_(major >= 1),
            "VERSION_equals___version__": np.bool_(tf.VERSION == tf.__version__),
            "compat_v1_has_placeholder": np.bool_(hasattr(tf.compat.v1, "placeholder")),
            "before": before, "after": after, "w_name": np.array(w.name)}
