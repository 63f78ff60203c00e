"""What tf.test reports about the build and the machine: tensorweave is a Python + NumPy build
without CUDA, ROCm or XLA, and a GPU is available only when a "GPU" device type is registered
(runtime/device.py); plus the per-process temporary directory tests write into."""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import threading
from typing import Any, Optional

from tensorweave.runtime.device import device_types

_temp_dir: Optional[str] = None
_temp_lock = threading.Lock()


def is_built_with_cuda() -> bool:
    return False


def is_built_with_rocm() -> bool:
    return False


def is_built_with_gpu_support() -> bool:
    return False


def is_built_with_xla() -> bool:
    return False


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Any = None) -> bool:
    """Whether a GPU device can be created (never a CUDA one: there is no CUDA build)."""
    if cuda_only or min_cuda_compute_capability is not None:
        return False
    return "GPU" in device_types()


def gpu_device_name() -> str:
    """The first GPU's device name, or "" when there is none (TF's answer without a GPU)."""
    return "/device:GPU:0" if "GPU" in device_types() else ""


def get_temp_dir() -> str:
    """A temporary directory for this process, the same on every call, removed at exit; named
    after the main program as TF names it."""
    global _temp_dir
    with _temp_lock:
        if _temp_dir is None:
            main = os.path.basename(getattr(sys.modules.get("__main__"), "__file__", None) or "<string>")
            _temp_dir = tempfile.mkdtemp(prefix=os.path.splitext(main)[0])
            atexit.register(shutil.rmtree, _temp_dir, True)
    return _temp_dir
