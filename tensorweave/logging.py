"""`tf.logging`: TF1's logging functions on the 'tensorflow' logger (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.platform.tf_logging import (  # noqa: F401
    DEBUG, ERROR, FATAL, INFO, WARN, TaskLevelStatusMessage, debug, error, fatal, flush, get_verbosity, info,
    log, log_every_n, log_first_n, log_if, set_verbosity, vlog, warn, warning)

__getattr__ = _module_getattr("logging", __name__)
