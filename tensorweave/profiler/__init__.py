"""`tf.profiler`: profile, advise, Profiler, ProfileOptionBuilder, write_op_log (re-exports only)."""
from tensorweave.profiler.model_analyzer import (  # noqa: F401
    AdviceProto, Profiler, advise, profile)
from tensorweave.profiler.option_builder import ProfileOptionBuilder  # noqa: F401
from tensorweave.profiler.profile_nodes import GraphNodeProto, MultiGraphNodeProto  # noqa: F401
from tensorweave.profiler.tfprof_logger import OpLogProto, write_op_log  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("profiler", __name__)
