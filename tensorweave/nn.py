"""`tf.nn`: neural-network ops, losses, convolution and pooling, embeddings and RNNs
(re-exports only; the ops live in tensorweave/ops/)."""
from tensorweave.ops.math_ops import sigmoid, tanh  # noqa: F401
from tensorweave.ops.embedding_ops import embedding_lookup  # noqa: F401
from tensorweave.ops.rnn import dynamic_rnn, static_rnn  # noqa: F401
from tensorweave.ops import rnn_cell  # noqa: F401
