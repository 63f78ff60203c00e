"""A seeded tf.RandomShuffleQueue (op seed, then graph seed only) filled and closed, then drained
with dequeue and dequeue_many: the order TF's Philox stream gives (regression: the queue once used a
generator of its own)."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(27)
    out = {}
    for label, seed in (("op_seed", 5), ("graph_seed", None)):
        q = tf.RandomShuffleQueue(capacity=30, min_after_dequeue=3, dtypes=[tf.int32, tf.string],
                                  shapes=[[], []], seed=seed)
        fill = q.enqueue_many([tf.range(25), tf.as_string(tf.range(25))])
        one = q.dequeue()
        many = q.dequeue_many(6)
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(q.close())
            first = sess.run(one)
            batches = [sess.run(many) for _ in range(3)]
            rest = sess.run(q.dequeue_up_to(30))
        out[label + "_first"] = np.array([first[0], int(first[1])], np.int64)
        out[label + "_batches"] = np.array([b[0] for b in batches])
        out[label + "_rest"] = rest[0]
        out[label + "_strings_agree"] = np.bool_(all(
            [int(s) for s in b[1]] == b[0].tolist() for b in batches))
    return out
