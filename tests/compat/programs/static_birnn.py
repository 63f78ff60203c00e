"""tf.nn.static_bidirectional_rnn over unstacked time steps (LSTMCell forward, GRUCell backward) for
sequence classification, trained with RMSProp; and a second pair of cells run with
sequence_length, where the backward direction reverses each row within its own length."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(11)
    rng = np.random.RandomState(1)
    data = rng.randn(16, 5, 3).astype(np.float32)
    labels = (data.sum(axis=(1, 2)) > 0).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, 5, 3])
    y = tf.placeholder(tf.int64, [None])
    seq = tf.unstack(x, 5, 1)
    fw = tf.nn.rnn_cell.LSTMCell(8)
    bw = tf.nn.rnn_cell.GRUCell(8)
    outputs, fw_state, bw_state = tf.nn.static_bidirectional_rnn(fw, bw, seq, dtype=tf.float32)
    lengths = tf.placeholder(tf.int32, [None])
    masked, m_fw, m_bw = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.BasicRNNCell(3), tf.nn.rnn_cell.BasicLSTMCell(2), seq, dtype=tf.float32,
        sequence_length=lengths, scope="with_lengths")
    w = tf.Variable(tf.random_normal([16, 2], seed=1))
    b = tf.Variable(tf.zeros([2]))
    logits = tf.matmul(outputs[-1], w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(6):
            losses.append(sess.run([train_op, loss], {x: data, y: labels})[1])
        out0, bws = sess.run([outputs[0], bw_state], {x: data[:4]})
        masked_out, mfw, mbw = sess.run([tf.stack(masked), m_fw, m_bw], {x: data[:4], lengths: [5, 2, 3, 1]})
    return {"losses": np.array(losses, np.float32), "first_output": out0, "bw_state": bws,
            "masked_outputs": masked_out, "masked_fw_state": mfw, "masked_bw_state": np.stack(mbw),
            "n_outputs": np.int64(len(outputs)), "variable_names": np.array([v.name for v in tf.global_variables()])}
