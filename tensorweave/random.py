"""`tf.random`: random ops and seeds under their TF1.13+ namespace (re-exports only)."""
from tensorweave.framework.random_seed import get_seed, set_random_seed  # noqa: F401
from tensorweave.ops.random import multinomial  # noqa: F401
from tensorweave.ops.random import random_normal as normal  # noqa: F401
from tensorweave.ops.random import random_shuffle as shuffle  # noqa: F401
from tensorweave.ops.random import random_uniform as uniform  # noqa: F401
from tensorweave.ops.random import truncated_normal  # noqa: F401
from tensorweave.ops.random import stateless_categorical  # noqa: F401
from tensorweave.ops.random import stateless_multinomial  # noqa: F401
from tensorweave.ops.random import stateless_random_normal as stateless_normal  # noqa: F401
from tensorweave.ops.random import stateless_random_uniform as stateless_uniform  # noqa: F401
from tensorweave.ops.random import stateless_truncated_normal  # noqa: F401
from tensorweave.ops.random import log_uniform_candidate_sampler  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("random", __name__)
