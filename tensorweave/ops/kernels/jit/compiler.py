"""Compiling a cluster's program with numba, once per process and once per machine.

The generated source (codegen.py) is written to `<cache dir>/tw_jit_<key>.py`, where the key
digests the program (structure, types, constants), and imported from there; numba's own cache
(`cache=True`) keeps the machine code beside it in `__pycache__`, so a second process loads the
kernel instead of compiling it (about 1 s a cluster saved). The directory is $TW_JIT_CACHE_DIR,
else ~/.cache/tensorweave/jit. Within a process, kernels are shared by key.

numba is optional (`pip install tensorweave[jit]`): `numba_available()` says whether it imports,
and logs once when not, so clusters then run unfused.
"""
from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import tempfile
import threading
from types import ModuleType
from typing import Any, Optional

from tensorweave.ops.kernels.jit.codegen import KERNEL_NAME, LOOP_NAME, program_key, ufunc_source

__all__ = ["cache_dir", "compile_program", "load_numba", "numba_available"]

_log = logging.getLogger("tensorweave.jit")
_lock = threading.Lock()
_kernels: dict[str, tuple[Any, Any]] = {}
_noted = False


def load_numba() -> ModuleType:
    """numba, imported on first use (importing it costs ~0.6 s: never at tensorweave's import).
    Tests replace this function to act as if numba were missing."""
    return importlib.import_module("numba")


def numba_available() -> bool:
    global _noted
    try:
        load_numba()
    except ImportError:
        if not _noted:
            _noted = True
            _log.info("numba not installed: jit clusters run unfused (pip install tensorweave[jit])")
        return False
    return True


def cache_dir() -> str:
    return os.environ.get("TW_JIT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                "tensorweave", "jit")


def compile_program(program: dict[str, Any]) -> tuple[Any, Any]:
    """(the NumPy ufunc computing the program's element-wise result, the same as a loop
    `loop(out, *inputs)` over 1-D contiguous arrays of one size), compiled or loaded once."""
    key = program_key(program)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                kernel = _kernels[key] = _load(key, program)
    return kernel


def _load(key: str, program: dict[str, Any]) -> tuple[Any, Any]:
    load_numba()
    directory = cache_dir()
    os.makedirs(directory, exist_ok=True)
    name = f"tw_jit_{key}"
    path = os.path.join(directory, name + ".py")
    source = ufunc_source(program)
    if _read(path) != source:
        # Written once under a name unique to the program, atomically: numba's cache index
        # checks the file's time stamp, so an existing file is never rewritten.
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    module = sys.modules.get(name) or _import(name, path)
    dufunc = getattr(module, KERNEL_NAME)
    # the plain NumPy ufunc: no Python-level wrapper per call
    return getattr(dufunc, "ufunc", dufunc), getattr(module, LOOP_NAME)


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _import(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
