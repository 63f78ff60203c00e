"""What the public namespaces share that is not itself public: the nested namespaces that have no
module of their own at the top (tf.io.gfile, tf.nn.rnn_cell, tf.train.queue_runner), TF 1.x's
name list, and the module `__getattr__` that reports a TF name tensorweave does not provide."""
