"""tf.gfile / tf.io.gfile: TF's file API on the local file system (plain paths and `file://` URLs),
raising TF's error classes with TF's messages (tests/data/tf_gfile_expected.json records what
TensorFlow 2.21 does in each case).

TF's GFile opens lazily: a reader opens on its first read, a writer creates its file on its first
write, so constructing a GFile on a missing file does not fail; `read(n)` counts bytes, and text
mode decodes what was read as UTF-8."""
from __future__ import annotations

import errno
import glob as _glob
import os
import shutil
from typing import IO, Any, Callable, Iterator, Optional, Union

from tensorweave.framework import errors
from tensorweave.lib import file_io
from tensorweave.lib.compat import as_bytes, as_str_any, path_to_str

_MODES = ("r", "w", "a", "rb", "wb", "ab", "r+", "w+", "a+", "r+b", "w+b", "a+b")


def _local(path: Any) -> str:
    """The local path of `path` (str, bytes, os.PathLike, or a `file://` URL); TF's
    UnimplementedError for a scheme with no file system here."""
    name = as_str_any(path_to_str(path))
    scheme, sep, rest = name.partition("://")
    if not sep or "/" in scheme:
        return name
    if scheme == "file":
        return rest
    raise errors.UnimplementedError(None, None, f"File system scheme '{scheme}' not implemented (file: '{name}')")


def _fail(err: OSError, path: str) -> errors.OpError:
    return file_io.os_error_to_tf(err, path)


class GFile:
    """A file with TF's reading and writing API (tf.gfile.GFile, tf.io.gfile.GFile, tf.gfile.Open)."""

    def __init__(self, name: Any, mode: str = "r") -> None:
        if mode not in _MODES:
            raise errors.InvalidArgumentError(None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'")
        self._name = name
        self._path = _local(name)
        self._mode = mode
        self._binary = "b" in mode
        self._readable = "r" in mode or "+" in mode
        self._writable = "w" in mode or "a" in mode or "+" in mode
        self._reader: Optional[IO[bytes]] = None
        self._writer: Optional[IO[bytes]] = None

    @property
    def name(self) -> Any:
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    # -- opening on first use -------------------------------------------------------------------
    def _read_file(self) -> IO[bytes]:
        if not self._readable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for reading")
        if self._reader is None:
            self._reader = file_io.open_file(self._path, "rb")
        return self._reader

    def _write_file(self) -> IO[bytes]:
        if not self._writable:
            raise errors.PermissionDeniedError(None, None, "File isn't open for writing")
        if self._writer is None:
            self._writer = file_io.open_file(self._path, "ab" if "a" in self._mode else "wb")
        return self._writer

    def _out(self, data: bytes) -> Union[str, bytes]:
        return data if self._binary else data.decode("utf-8")

    # -- reading --------------------------------------------------------------------------------
    def size(self) -> int:
        """The file's length in bytes."""
        return stat(self._path).length

    def read(self, n: int = -1) -> Union[str, bytes]:
        """Up to `n` bytes (all that is left when n is -1), as str in text mode."""
        f = self._read_file()
        return self._out(f.read() if n is None or n < 0 else f.read(n))

    def readline(self) -> Union[str, bytes]:
        return self._out(self._read_file().readline())

    def readlines(self) -> list:
        return [self._out(line) for line in self._read_file().readlines()]

    def seek(self, offset: Optional[int] = None, whence: int = 0, position: Optional[int] = None) -> None:
        """Moves the read position: from the start (whence 0), the current position (1) or the end
        (2). `position` is TF1's older name for `offset`."""
        f = self._read_file()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        target = offset if offset is not None else position
        if whence == 1:
            target += f.tell()
        elif whence == 2:
            target += self.size()
        elif whence != 0:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.")
        f.seek(target)

    def tell(self) -> int:
        if self._readable:
            return self._read_file().tell()
        return self._write_file().tell()

    def __iter__(self) -> Iterator[Union[str, bytes]]:
        return self

    def __next__(self) -> Union[str, bytes]:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__  # TF1's Python 2 iterator name

    # -- writing --------------------------------------------------------------------------------
    def write(self, file_content: Union[str, bytes]) -> None:
        """Appends `file_content` (str is written as UTF-8, in either mode)."""
        self._write_file().write(as_bytes(file_content))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        for f in (self._reader, self._writer):
            if f is not None:
                f.close()
        self._reader = self._writer = None

    def seekable(self) -> bool:
        return True

    def __enter__(self) -> "GFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FastGFile(GFile):
    """TF1's deprecated name for a GFile without thread locking: the same file here."""


Open = GFile  # TF: tf.gfile.Open is tf.gfile.GFile


class FileStatistics:
    """What Stat returns: length in bytes, modification time in nanoseconds, directory or not."""

    __slots__ = ("length", "mtime_nsec", "is_directory")

    def __init__(self, length: int = 0, mtime_nsec: int = 0, is_directory: bool = False) -> None:
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory

    def __repr__(self) -> str:
        return (f"FileStatistics(length={self.length}, mtime_nsec={self.mtime_nsec}, "
                f"is_directory={self.is_directory})")


# -- queries --------------------------------------------------------------------------------------
def exists(path: Any) -> bool:
    """Whether a file or directory is at `path`."""
    return os.path.exists(_local(path))


def isdir(path: Any) -> bool:
    """Whether `path` is a directory (False when nothing is there)."""
    return os.path.isdir(_local(path))


def listdir(path: Any) -> list[str]:
    """The names in directory `path` (not `.` and `..`), in the file system's order."""
    local = _local(path)
    if not os.path.isdir(local):
        raise errors.NotFoundError(None, None, f"Could not find directory {local}")
    try:
        return os.listdir(local)
    except OSError as err:
        raise _fail(err, local) from None


def glob(pattern: Any) -> list[str]:
    """The paths matching `pattern` (`*`, `?`, `[...]`; a wildcard never crosses `/`; hidden
    names match too, as in TF). A list of patterns gives the matches of each, in turn."""
    if isinstance(pattern, (list, tuple)):
        return [match for one in pattern for match in glob(one)]
    text = as_str_any(path_to_str(pattern))
    local = _local(text)
    prefix = text[: len(text) - len(local)]  # keep `file://` on the matches, as given
    return [prefix + match for match in sorted(_glob.glob(local, include_hidden=True))]


def stat(path: Any) -> FileStatistics:
    """The FileStatistics of `path`."""
    local = _local(path)
    try:
        st = os.stat(local)
    except OSError as err:
        raise _fail(err, local) from None
    is_dir = os.path.isdir(local)
    return FileStatistics(0 if is_dir else st.st_size, st.st_mtime_ns, is_dir)


def walk(top: Any, topdown: bool = True, onerror: Optional[Callable[[Exception], Any]] = None
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """(directory, subdirectory names, file names) for `top` and every directory below it, parents
    first when `topdown`; nothing for a missing `top` (onerror gets its NotFoundError)."""
    top = as_str_any(path_to_str(top))
    try:
        names = listdir(top)
    except errors.NotFoundError as err:
        if onerror is not None:
            onerror(err)
        return
    subdirs, files = [], []
    for name in names:
        (subdirs if isdir(os.path.join(top, name)) else files).append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for sub in subdirs:
        yield from walk(os.path.join(top, sub), topdown, onerror)
    if not topdown:
        yield here


def join(path: Any, *paths: Any) -> str:
    """Path components joined with `/`; a URL keeps its scheme (`gs://b` + `x` is `gs://b/x`)."""
    base = as_str_any(path_to_str(path))
    if "://" in base[1:]:
        parts = [base] + [as_str_any(path_to_str(p)) for p in paths]
        out = parts[0]
        for part in parts[1:]:
            out = part if "://" in part else (out if out.endswith("/") else out + "/") + part
        return out
    return os.path.join(base, *paths)


def get_registered_schemes() -> list[str]:
    """The URL schemes with a file system here: local paths and `file://`."""
    return ["", "file"]


# -- changing the tree ----------------------------------------------------------------------------
def mkdir(path: Any) -> None:
    """Creates directory `path`; nothing happens when something is already there (as TF 2.x);
    NotFoundError when its parent is missing."""
    local = _local(path)
    try:
        os.mkdir(local)
    except FileExistsError:
        return
    except OSError as err:
        raise _fail(err, local) from None


def makedirs(path: Any) -> None:
    """Creates directory `path` and its missing parents; FailedPreconditionError when one of them
    is a file."""
    local = _local(path)
    parts = local.split(os.sep)
    for i in range(1, len(parts) + 1):
        prefix = os.sep.join(parts[:i])
        if not prefix or prefix == ".":
            continue
        if os.path.isdir(prefix):
            continue
        if os.path.exists(prefix):
            raise errors.FailedPreconditionError(None, None, f"{prefix} is not a directory")
        try:
            os.mkdir(prefix)
        except FileExistsError:
            continue  # made by someone else meanwhile
        except OSError as err:
            raise _fail(err, prefix) from None


def remove(path: Any) -> None:
    """Deletes the file at `path` (FailedPreconditionError for a directory)."""
    local = _local(path)
    try:
        if os.path.isdir(local):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR))
        os.remove(local)
    except OSError as err:
        raise _fail(err, local) from None


def rmtree(path: Any) -> None:
    """Deletes `path` and everything below it (a file is simply deleted)."""
    local = _local(path)
    if not os.path.lexists(local):
        raise errors.NotFoundError(None, None, f"{local} not found")
    try:
        if os.path.isdir(local) and not os.path.islink(local):
            shutil.rmtree(local)
        else:
            os.remove(local)
    except OSError as err:
        raise _fail(err, local) from None


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Moves `src` to `dst`; AlreadyExistsError when `dst` exists unless `overwrite`."""
    old, new = _local(src), _local(dst)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    try:
        os.replace(old, new)
    except OSError as err:
        raise _fail(err, old) from None


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Copies file `src` to `dst`; AlreadyExistsError when `dst` exists unless `overwrite`."""
    old, new = _local(src), _local(dst)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, "file already exists")
    if os.path.isdir(old):
        # TF opens the source, then fails writing the copy: the error names the destination.
        raise errors.InvalidArgumentError(None, None, f"{new}; {os.strerror(errno.EINVAL)}")
    try:
        shutil.copyfile(old, new)
    except OSError as err:
        raise _fail(err, err.filename if err.filename in (old, new) else old) from None


# TF1's tf.gfile names for the same functions.
Exists = exists
IsDirectory = isdir
ListDirectory = listdir
Glob = glob
Stat = stat
MkDir = mkdir
MakeDirs = makedirs
Remove = remove
DeleteRecursively = rmtree
Rename = rename
Copy = copy


def Walk(top: Any, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:  # noqa: N802
    """TF1's walk: parents first when `in_order`."""
    return walk(top, topdown=in_order)
