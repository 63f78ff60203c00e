"""Softmax regression on the digits, driven the way TF1 tutorials drive a script: tf.app.flags for
the hyperparameters, tf.app.run, tf.logging for progress, tf.gfile to make the model directory and
to write a results file, tf.train.Saver for the checkpoint."""
import os

import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    flags = tf.app.flags
    # Flags are process-global (absl); define them once even if the program runs twice.
    if "compat_learning_rate" not in flags.FLAGS:
        flags.DEFINE_float("compat_learning_rate", 0.1, "learning rate")
        flags.DEFINE_integer("compat_steps", 20, "training steps")
        flags.DEFINE_string("compat_model_dir", "/nonexistent", "where to save")
        flags.DEFINE_boolean("compat_verbose", False, "log every step")
    FLAGS = flags.FLAGS
    results = {}

    def main(argv):
        del argv
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.reset_default_graph()
        tf.set_random_seed(1)
        images, labels = _data.digits(200)
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y_ = tf.placeholder(tf.float32, [None, 10], name="y_")
        W = tf.Variable(tf.zeros([64, 10]), name="W")
        b = tf.Variable(tf.zeros([10]), name="b")
        y = tf.matmul(x, W) + b
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
        train_step = tf.train.GradientDescentOptimizer(FLAGS.compat_learning_rate).minimize(loss)
        correct = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        if not tf.gfile.Exists(FLAGS.compat_model_dir):
            tf.gfile.MakeDirs(FLAGS.compat_model_dir)
        saver = tf.train.Saver()
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(FLAGS.compat_steps):
                _, l = sess.run([train_step, loss], {x: images, y_: _data.one_hot(labels)})
                losses.append(l)
                if FLAGS.compat_verbose:
                    tf.logging.info("step %d loss %f", step, l)
            acc = sess.run(accuracy, {x: images, y_: _data.one_hot(labels)})
            path = saver.save(sess, os.path.join(FLAGS.compat_model_dir, "model.ckpt"))
            tf.logging.info("saved %s", path)
        with tf.gfile.GFile(os.path.join(FLAGS.compat_model_dir, "result.txt"), "w") as f:
            f.write("accuracy %.4f\n" % acc)
        with tf.gfile.GFile(os.path.join(FLAGS.compat_model_dir, "result.txt"), "r") as f:
            text = f.read()
        results["losses"] = np.array(losses, np.float32)
        results["accuracy"] = np.float32(acc)
        results["result_text"] = np.array(text)
        results["dir_listing"] = np.array(sorted(tf.gfile.ListDirectory(FLAGS.compat_model_dir)))
        results["steps_flag"] = np.int64(FLAGS.compat_steps)
        results["verbose_flag"] = np.bool_(FLAGS.compat_verbose)

    argv = ["softmax_flags", "--compat_steps=15", "--compat_verbose",
            "--compat_model_dir=" + os.path.join(workdir, "model")]
    try:
        tf.app.run(main=main, argv=argv)
    except SystemExit as e:  # tf.app.run ends with sys.exit(main(argv))
        if e.code not in (None, 0):
            raise
    return results
