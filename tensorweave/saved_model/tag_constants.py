"""tf.saved_model.tag_constants: the tags that name a SavedModel's MetaGraphDefs."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# tf.saved_model.tag_constants's public names
__all__ = [
    "GPU", "SERVING", "TPU", "TRAINING"]

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.tag_constants", __name__)
