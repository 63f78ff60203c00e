"""`tf.test`: the numeric gradient checker (re-exports only)."""
from tensorweave.testing.gradient_checker import compute_gradient, compute_gradient_error  # noqa: F401
from tensorweave.platform.test_env import (  # noqa: F401,E402
    get_temp_dir, gpu_device_name, is_built_with_cuda, is_built_with_gpu_support, is_built_with_rocm,
    is_built_with_xla, is_gpu_available)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("test", __name__)
