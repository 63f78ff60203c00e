"""A bag-of-words classifier on sparse input: a tf.SparseTensor of word ids fed through
tf.sparse_placeholder, tf.nn.embedding_lookup_sparse (mean combiner), and a second path with
tf.sparse_tensor_dense_matmul on a sparse count matrix; tf.sparse_reduce_sum and
tf.sparse_tensor_to_dense on the same input."""
import numpy as np


def _docs(rng, n, vocab):
    indices, ids, counts = [], [], []
    for doc in range(n):
        words = sorted(set(rng.randint(0, vocab, rng.randint(1, 5)).tolist()))
        for j, w in enumerate(words):
            indices.append([doc, j])
            ids.append(w)
            counts.append(float(rng.randint(1, 3)))
    return np.array(indices, np.int64), np.array(ids, np.int64), np.array(counts, np.float32)


def run(tf, workdir):
    tf.set_random_seed(14)
    rng = np.random.RandomState(4)
    vocab, n = 12, 10
    indices, ids, counts = _docs(rng, n, vocab)
    labels = (ids[indices[:, 1] == 0] % 2).astype(np.int64)
    sp_ids = tf.sparse_placeholder(tf.int64)
    sp_counts = tf.SparseTensor(indices=np.stack([indices[:, 0], ids], 1), values=counts,
                                dense_shape=[n, vocab])
    y = tf.placeholder(tf.int64, [n])
    emb = tf.get_variable("emb", [vocab, 4], initializer=tf.random_normal_initializer(seed=3))
    w_counts = tf.get_variable("w_counts", [vocab, 4], initializer=tf.random_normal_initializer(seed=4))
    h = tf.nn.embedding_lookup_sparse(emb, sp_ids, None, combiner="mean")
    h2 = tf.sparse_tensor_dense_matmul(sp_counts, w_counts)
    logits = tf.layers.dense(tf.concat([h, h2], 1), 2, kernel_initializer=tf.ones_initializer())
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
    total = tf.sparse_reduce_sum(sp_counts, axis=1)
    dense = tf.sparse_tensor_to_dense(sp_counts)
    feed = {sp_ids: tf.SparseTensorValue(indices, ids, [n, 5]), y: labels}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train_op, loss], feed)[1] for _ in range(6)]
        hv, tv, dv = sess.run([h, total, dense], feed)
    return {"losses": np.array(losses, np.float32), "bag_embedding": hv, "row_totals": tv, "dense_counts": dv}
