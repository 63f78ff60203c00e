"""The TF1 moving-average idiom `with tf.control_dependencies([train_op]): ema.apply(...)` with
num_updates=global_step: the average must see the variable and the step as the train op left them
(TF's ref reads alias the variable; regression: the averages used to see the values from before
the update)."""
import numpy as np


def run(tf, workdir):
    w = tf.get_variable("w", [3], initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.square(w - 1.0))
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
    ema = tf.train.ExponentialMovingAverage(0.95, num_updates=step)
    with tf.control_dependencies([train]):
        train_op = ema.apply([w])
    plain = tf.train.ExponentialMovingAverage(0.5, name="plain")
    counter = tf.get_variable("counter", [], initializer=tf.zeros_initializer())
    bump = tf.assign_add(counter, 1.0)
    with tf.control_dependencies([bump]):
        count_op = plain.apply([counter])
    rows = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(4):
            sess.run([train_op, count_op])
            rows.append(np.concatenate([sess.run(w), sess.run(ema.average(w)),
                                        [sess.run(counter), sess.run(plain.average(counter))]]))
    return {"trajectory": np.array(rows, np.float32)}
