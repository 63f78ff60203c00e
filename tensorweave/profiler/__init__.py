"""`tf.profiler`: profile, advise, Profiler, ProfileOptionBuilder, write_op_log (re-exports only)."""
from tensorweave.profiler.model_analyzer import (  # noqa: F401
    ALL_ADVICE, AdviceProto, Profiler, advise, profile)
from tensorweave.profiler.option_builder import ProfileOptionBuilder  # noqa: F401
from tensorweave.profiler.profile_nodes import GraphNodeProto, MultiGraphNodeProto  # noqa: F401
from tensorweave.profiler.tfprof_logger import OpLogProto, write_op_log  # noqa: F401
