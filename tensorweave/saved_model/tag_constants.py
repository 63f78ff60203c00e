"""tf.saved_model.tag_constants: the tags that name a SavedModel's MetaGraphDefs."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
