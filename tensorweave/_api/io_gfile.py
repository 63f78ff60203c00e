"""`tf.io.gfile`: the file API under its snake_case names (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.platform.gfile import (  # noqa: F401
    GFile, copy, exists, get_registered_schemes, glob, isdir, join, listdir, makedirs, mkdir, remove, rename,
    rmtree, stat, walk)

__getattr__ = _module_getattr("io.gfile", "tensorweave.io.gfile")
