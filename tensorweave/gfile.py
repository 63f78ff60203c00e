"""`tf.gfile`: TF1's file API (re-exports only; tf.io.gfile holds the snake_case names)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.platform.gfile import (  # noqa: F401
    Copy, DeleteRecursively, Exists, FastGFile, GFile, Glob, IsDirectory, ListDirectory, MakeDirs, MkDir, Open,
    Remove, Rename, Stat, Walk)

__getattr__ = _module_getattr("gfile", __name__)
