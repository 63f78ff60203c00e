"""A word2vec-tutorial-style skip-gram model with tf.nn.nce_loss (seeded negative sampling),
embeddings normalised for cosine similarity the way the tutorial does."""
import numpy as np


def _skipgram_pairs(rng, vocab, n):
    words = rng.randint(0, vocab, size=n + 2)
    centers = words[1:-1]
    contexts = np.where(rng.rand(n) < 0.5, words[:-2], words[2:])
    return centers.astype(np.int32), contexts.reshape(-1, 1).astype(np.int64)


def run(tf, workdir):
    tf.set_random_seed(12)
    vocab, dim = 50, 8
    centers, contexts = _skipgram_pairs(np.random.RandomState(2), vocab, 64)
    train_inputs = tf.placeholder(tf.int32, shape=[32])
    train_labels = tf.placeholder(tf.int64, shape=[32, 1])
    embeddings = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0))
    embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    nce_weights = tf.Variable(tf.truncated_normal([vocab, dim], stddev=1.0 / np.sqrt(dim)))
    nce_biases = tf.Variable(tf.zeros([vocab]))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels,
                                         inputs=embed, num_sampled=6, num_classes=vocab))
    optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized = embeddings / norm
    valid = tf.constant([1, 2, 3], dtype=tf.int32)
    similarity = tf.matmul(tf.nn.embedding_lookup(normalized, valid), normalized, transpose_b=True)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(6):
            sl = slice((step % 2) * 32, (step % 2) * 32 + 32)
            _, l = sess.run([optimizer, loss], {train_inputs: centers[sl], train_labels: contexts[sl]})
            losses.append(l)
        sim = sess.run(similarity)
    return {"losses": np.array(losses, np.float32), "similarity": sim}
