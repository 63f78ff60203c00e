"""Logistic regression fed by a TF1 input pipeline: CSV files written to disk, then
string_input_producer, TextLineReader, decode_csv, shuffle_batch, a Coordinator and queue runners.
One epoch with min_after_dequeue = the whole data set: no batch leaves before the queue is closed
holding every record, so the order is a function of the seed alone (a shuffle queue that is still
filling hands out whatever it held at that moment, which depends on thread timing in TF too)."""
import os

import numpy as np


def run(tf, workdir):
    tf.set_random_seed(15)
    rng = np.random.RandomState(5)
    files = []
    for part in range(2):
        path = os.path.join(workdir, "part-%d.csv" % part)
        with open(path, "w") as f:
            for _ in range(20):
                a, b = rng.randn(2)
                f.write("%.4f,%.4f,%d\n" % (a, b, int(a + 2 * b > 0)))
        files.append(path)
    filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.TextLineReader()
    key, value = reader.read(filename_queue)
    a, b, label = tf.decode_csv(value, record_defaults=[[0.0], [0.0], [0]])
    features = tf.stack([a, b])
    feat_batch, label_batch = tf.train.shuffle_batch([features, label], batch_size=8, capacity=48,
                                                     min_after_dequeue=40, num_threads=1, seed=3)
    w = tf.Variable(tf.zeros([2, 1]))
    bias = tf.Variable(0.0)
    logit = tf.squeeze(tf.matmul(feat_batch, w), 1) + bias
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(label_batch, tf.float32),
                                                                  logits=logit))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    losses, seen = [], []
    epoch_done = False
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())  # the epoch counter of num_epochs
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                _, l, lb = sess.run([train_op, loss, label_batch])
                losses.append(l)
                seen.append(lb)
        except tf.errors.OutOfRangeError:
            epoch_done = True
        finally:
            coord.request_stop()
        coord.join(threads)
        wv, bv = sess.run([w, bias])
    return {"losses": np.array(losses, np.float32), "labels_seen": np.array(seen), "w": wv, "b": np.float32(bv),
            "epoch_done": np.bool_(epoch_done)}
