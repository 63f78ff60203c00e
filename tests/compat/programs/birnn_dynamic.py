"""A text-classification idiom: embedding_lookup of padded token ids, bidirectional_dynamic_rnn with
GRU cells and sequence_length, the final states concatenated, tf.gather_nd of the last valid output,
tf.train.AdamOptimizer, and variable names under the 'bidirectional_rnn' scopes."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(26)
    rng = np.random.RandomState(10)
    ids = rng.randint(1, 15, (8, 7)).astype(np.int32)
    lengths = rng.randint(2, 8, 8).astype(np.int32)
    for i, n in enumerate(lengths):
        ids[i, n:] = 0
    labels = (ids[:, 0] > 7).astype(np.int64)
    tokens = tf.placeholder(tf.int32, [None, 7])
    seq_len = tf.placeholder(tf.int32, [None])
    y = tf.placeholder(tf.int64, [None])
    emb = tf.get_variable("embedding", [15, 5])
    inputs = tf.nn.embedding_lookup(emb, tokens)
    fw, bw = tf.nn.rnn_cell.GRUCell(6), tf.nn.rnn_cell.GRUCell(6)
    (out_fw, out_bw), (st_fw, st_bw) = tf.nn.bidirectional_dynamic_rnn(fw, bw, inputs, sequence_length=seq_len,
                                                                       dtype=tf.float32)
    idx = tf.stack([tf.range(tf.shape(tokens)[0]), seq_len - 1], axis=1)
    last_fw = tf.gather_nd(out_fw, idx)
    feats = tf.concat([st_fw, st_bw, last_fw], axis=1)
    logits = tf.layers.dense(feats, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(0.02).minimize(loss)
    feed = {tokens: ids, seq_len: lengths, y: labels}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([train_op, loss], feed)[1] for _ in range(6)]
        ob, f = sess.run([out_bw, feats], feed)
    return {"losses": np.array(losses, np.float32), "out_bw": ob, "features": f,
            "variable_names": np.array([v.name for v in tf.trainable_variables()])}
