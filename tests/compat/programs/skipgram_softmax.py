"""A skip-gram embedding model with a full softmax over the vocabulary (no sampling):
embedding_lookup, tf.losses.sparse_softmax_cross_entropy, Adagrad, nearest neighbours by top_k."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(13)
    rng = np.random.RandomState(3)
    vocab, dim = 30, 6
    centers = rng.randint(0, vocab, 48).astype(np.int32)
    contexts = ((centers + rng.randint(1, 3, 48)) % vocab).astype(np.int64)
    x = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int64, [None])
    with tf.variable_scope("embeddings"):
        emb = tf.get_variable("table", [vocab, dim], initializer=tf.random_uniform_initializer(-1.0, 1.0))
    with tf.variable_scope("output"):
        w = tf.get_variable("w", [dim, vocab], initializer=tf.truncated_normal_initializer(stddev=0.3))
        b = tf.get_variable("b", [vocab], initializer=tf.zeros_initializer())
    logits = tf.nn.xw_plus_b(tf.nn.embedding_lookup(emb, x), w, b)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdagradOptimizer(0.5).minimize(loss)
    normed = tf.nn.l2_normalize(emb, axis=1)
    sim = tf.matmul(normed, normed, transpose_b=True)
    _, nearest = tf.nn.top_k(sim[:4], k=3)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(10):
            losses.append(sess.run([train_op, loss], {x: centers, y: contexts})[1])
        nn, table = sess.run([nearest, emb])
    return {"losses": np.array(losses, np.float32), "nearest": nn, "table": table,
            "variable_names": np.array([v.name for v in tf.global_variables()])}
