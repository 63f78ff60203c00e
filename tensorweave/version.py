"""`tf.version`: the TF 1.x version strings tensorweave reports (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.platform.versions import (  # noqa: F401
    COMPILER_VERSION, GIT_VERSION, GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER, VERSION)

__getattr__ = _module_getattr("version", __name__)
