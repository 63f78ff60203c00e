"""A PTB-tutorial-style LSTM language model on a synthetic token stream: embedding, MultiRNNCell of
BasicLSTMCell wrapped in DropoutWrapper, dynamic_rnn, a sequence loss weighted by a mask, gradients
clipped with clip_by_global_norm, state carried between steps through feeds."""
import numpy as np


def run(tf, workdir):
    rnn_cell = tf.nn.rnn_cell
    tf.set_random_seed(10)
    rng = np.random.RandomState(0)
    vocab, batch, steps, hidden = 20, 4, 6, 16
    stream = rng.randint(0, vocab, size=batch * (steps * 5 + 1)).reshape(batch, -1)
    inputs = tf.placeholder(tf.int32, [batch, steps])
    targets = tf.placeholder(tf.int32, [batch, steps])
    lengths = tf.placeholder(tf.int32, [batch])
    embedding = tf.get_variable("embedding", [vocab, hidden], dtype=tf.float32)
    emb = tf.nn.embedding_lookup(embedding, inputs)
    cells = [rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(hidden, forget_bias=0.0), output_keep_prob=0.9,
                                     seed=i) for i in range(2)]
    cell = rnn_cell.MultiRNNCell(cells, state_is_tuple=True)
    initial_state = cell.zero_state(batch, tf.float32)
    # parallel_iterations=1: TF's executor runs the dropout's random op of several time steps in
    # its own scheduling order (later steps may draw first); one at a time, steps draw in order.
    outputs, state = tf.nn.dynamic_rnn(cell, emb, sequence_length=lengths, initial_state=initial_state,
                                       parallel_iterations=1)
    softmax_w = tf.get_variable("softmax_w", [hidden, vocab], dtype=tf.float32)
    softmax_b = tf.get_variable("softmax_b", [vocab], dtype=tf.float32)
    logits = tf.reshape(tf.matmul(tf.reshape(outputs, [-1, hidden]), softmax_w) + softmax_b, [batch, steps, vocab])
    mask = tf.sequence_mask(lengths, steps, dtype=tf.float32)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    cost = tf.reduce_sum(xent * mask) / tf.reduce_sum(mask)
    tvars = tf.trainable_variables()
    grads, norm = tf.clip_by_global_norm(tf.gradients(cost, tvars), 0.5)
    train_op = tf.train.GradientDescentOptimizer(1.0).apply_gradients(zip(grads, tvars))
    costs, norms = [], []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        st = sess.run(initial_state)
        for i in range(5):
            feed = {inputs: stream[:, i * steps:(i + 1) * steps], targets: stream[:, i * steps + 1:(i + 1) * steps + 1],
                    lengths: [steps, steps - 1, steps, 3]}
            for layer, (c, h) in enumerate(initial_state):
                feed[c] = st[layer].c
                feed[h] = st[layer].h
            c_val, n_val, st, _ = sess.run([cost, norm, state, train_op], feed)
            costs.append(c_val)
            norms.append(n_val)
    return {"costs": np.array(costs, np.float32), "norms": np.array(norms, np.float32),
            "final_h": st[1].h, "variable_names": np.array([v.name for v in tvars])}
