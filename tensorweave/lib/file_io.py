"""Opening files with TensorFlow's error classes: a missing file is `tf.errors.NotFoundError`, a
denied one `PermissionDeniedError`, a directory `FailedPreconditionError`, as TF's file system
layer reports them, so file-reading ops and the TFRecord library fail the same way."""
from __future__ import annotations

import errno
import os
from typing import IO, Any, Union

from tensorweave.framework import errors

PathLike = Union[str, bytes, "os.PathLike[str]"]


def as_path(path: Any) -> str:
    """A file name given as str, bytes or os.PathLike, as str; TypeError for anything else."""
    if isinstance(path, bytes):
        return path.decode("utf-8")
    if isinstance(path, str):
        return path
    if isinstance(path, os.PathLike):
        return os.fspath(path)  # type: ignore[return-value]
    raise TypeError(f"Expected a file path (str, bytes or os.PathLike), got {path!r} of type "
                    f"{type(path).__name__}")


def os_error_to_tf(err: OSError, path: str) -> errors.OpError:
    """The TF error class and message (`<path>; <reason>`) for an OSError on `path`."""
    reason = err.strerror or str(err)
    message = f"{path}; {reason}"
    if err.errno == errno.ENOENT:
        return errors.NotFoundError(None, None, message)
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return errors.PermissionDeniedError(None, None, message)
    if err.errno in (errno.EISDIR, errno.ENOTDIR):
        return errors.FailedPreconditionError(None, None, message)
    if err.errno == errno.EEXIST:
        return errors.AlreadyExistsError(None, None, message)
    if err.errno == errno.ENOSPC:
        return errors.ResourceExhaustedError(None, None, message)
    return errors.UnknownError(None, None, message)


def open_file(path: Any, mode: str, buffering: int = -1) -> IO[bytes]:
    """`open(path, mode)` in binary mode, raising TF's error classes instead of OSError."""
    name = as_path(path)
    try:
        return open(name, mode, buffering=buffering)  # noqa: SIM115  (caller owns the file)
    except OSError as err:
        raise os_error_to_tf(err, name) from None
