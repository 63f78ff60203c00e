"""tf.saved_model: SavedModel export and import in TensorFlow's layout (re-exports)."""
from tensorweave.saved_model import builder  # noqa: F401
from tensorweave.saved_model import constants  # noqa: F401
from tensorweave.saved_model import loader  # noqa: F401
from tensorweave.saved_model import main_op  # noqa: F401
from tensorweave.saved_model import signature_constants  # noqa: F401
from tensorweave.saved_model import signature_def_utils  # noqa: F401
from tensorweave.saved_model import tag_constants  # noqa: F401
from tensorweave.saved_model import utils  # noqa: F401
from tensorweave.saved_model.builder import SavedModelBuilder as Builder  # noqa: F401
from tensorweave.saved_model.constants import (ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY,  # noqa: F401
                                               DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY,
                                               MAIN_OP_KEY, SAVED_MODEL_FILENAME_PB,
                                               SAVED_MODEL_FILENAME_PBTXT, SAVED_MODEL_SCHEMA_VERSION,
                                               VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from tensorweave.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory  # noqa: F401
from tensorweave.saved_model.main_op import main_op_with_restore  # noqa: F401
from tensorweave.saved_model.signature_constants import (CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME,  # noqa: F401
                                                         CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
                                                         DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS,
                                                         PREDICT_METHOD_NAME, PREDICT_OUTPUTS,
                                                         REGRESS_INPUTS, REGRESS_METHOD_NAME,
                                                         REGRESS_OUTPUTS)
from tensorweave.saved_model.signature_def_utils import (build_signature_def,  # noqa: F401
                                                         classification_signature_def,
                                                         is_valid_signature, predict_signature_def,
                                                         regression_signature_def)
from tensorweave.saved_model.simple_save import simple_save  # noqa: F401
from tensorweave.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING  # noqa: F401
from tensorweave.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model", __name__)
