"""tf.saved_model.constants: the names of a SavedModel's files, directories and collections
(TF1's saved_model/constants.py; the values are TensorFlow's, since the files are shared)."""

# Assets: the directory copied files live in, and the collection of their AssetFileDefs.
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
# Files a user adds beside the model; the builder never writes there.
EXTRA_ASSETS_DIRECTORY = "assets.extra"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"

# Collections holding the op run after the variables are restored.
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
TRAIN_OP_KEY = "saved_model_train_op"
# Signature keys TF 2 reserves for the init and train ops (read on load, never user keys).
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"

SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"

VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"

# tf.saved_model.constants's public names
__all__ = [
    "ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
    "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
    "SAVED_MODEL_SCHEMA_VERSION", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME"]

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.constants", __name__)
