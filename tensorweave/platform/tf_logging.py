"""tf.logging: TF1's logging functions on the 'tensorflow' Python logger, set up as TF sets it up
(a stderr handler with logging's basic format unless the root logger already has handlers, so
`tf.logging.set_verbosity(tf.logging.INFO)` then `tf.logging.info(...)` prints `INFO:tensorflow:...`).
Records name the caller's file and line, not this module's."""
from __future__ import annotations

import logging
import sys
import threading
from logging import DEBUG, ERROR, FATAL, INFO, WARN
from types import FrameType
from typing import Any, Optional

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN"]

_logger: Optional[logging.Logger] = None
_logger_lock = threading.Lock()
_counts: dict[tuple[str, int], int] = {}


_SKIPPED = (__file__, logging.addLevelName.__code__.co_filename)


def _find_caller(stack_info: bool = False, stacklevel: int = 1) -> tuple[str, int, str, Optional[str]]:
    """The logger's findCaller: the first frame outside this module and Python's logging."""
    f: Optional[FrameType] = sys._getframe(1)
    while f is not None and f.f_code.co_filename in _SKIPPED:
        f = f.f_back
    if f is None:
        return "(unknown file)", 0, "(unknown function)", None
    return f.f_code.co_filename, f.f_lineno, f.f_code.co_name, None


def get_logger() -> logging.Logger:
    """The 'tensorflow' logger (tf.get_logger)."""
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is None:
            logger = logging.getLogger("tensorflow")
            logger.findCaller = _find_caller  # type: ignore[method-assign,assignment]
            # Leave the output alone when the program configured logging itself (no double lines).
            if not logging.getLogger().handlers:
                interactive = hasattr(sys, "ps1") or bool(sys.flags.interactive)
                if interactive:
                    logger.setLevel(INFO)
                handler = logging.StreamHandler(sys.stdout if interactive else sys.stderr)
                handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().warning(msg, *args, **kwargs)


def warn(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().warning(msg, *args, **kwargs)


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs at FATAL (CRITICAL); like TF, it does not end the program."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level: int, msg: Any, condition: Any, *args: Any) -> None:
    """Logs `msg % args` at `level` when `condition` holds."""
    if condition:
        vlog(level, msg, *args)


def _next_count() -> int:
    """The count (0 the first time) for the calling site of log_first_n / log_every_n.

    TF keys these counters by the first frame whose file differs from the caller's own file (so
    every call from one script file, made from its top level or its functions, shares one counter
    unless a frame of another file is on the stack); programs see that grouping, so it is kept."""
    f: Optional[FrameType] = sys._getframe(2)  # 0: here, 1: log_first_n/log_every_n, 2: the caller
    key = ("<unknown>", 0)
    if f is not None:
        caller_file = f.f_code.co_filename
        f = f.f_back
        while f is not None:
            if f.f_code.co_filename != caller_file:
                key = (f.f_code.co_filename, f.f_lineno)
                break
            f = f.f_back
    _counts[key] = _counts.get(key, -1) + 1
    return _counts[key]


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs on the 1st, (n+1)th, (2n+1)th ... count of its calling site (see _next_count)."""
    log_if(level, msg, not (_next_count() % n), *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs while its calling site's count (see _next_count) is below `n`."""
    log_if(level, msg, _next_count() < n, *args)


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802  (TF's name)
    error(msg)


def flush() -> None:
    """Flushes the 'tensorflow' logger's handlers (TF's raises NotImplementedError; flushing is
    what a caller wants)."""
    for handler in get_logger().handlers:
        handler.flush()


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def set_verbosity(v: int) -> None:
    """Sets the threshold below which messages are dropped (e.g. tf.logging.INFO)."""
    get_logger().setLevel(v)
