"""TensorFlow's error classes (`tf.errors`), with TF's canonical error codes.

An `OpError` carries the failing `Operation` (its `node_def` and `op`), so messages name the
node and, through `Operation.traceback`, the line of user code that created it.
"""
from __future__ import annotations

from typing import Any, Optional

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running an op; `op` is the failing Operation when one is known."""

    error_code = UNKNOWN

    def __init__(self, node_def: Any, op: Any, message: str, error_code: Optional[int] = None,
                 *args: Any) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        if error_code is not None:
            self._error_code = error_code
        else:
            self._error_code = type(self).error_code

    @property
    def message(self) -> str:
        return self._message

    @property
    def op(self) -> Any:
        return self._op

    @property
    def node_def(self) -> Any:
        return self._node_def

    @property
    def error_code(self) -> int:  # type: ignore[override]
        return self._error_code

    def __str__(self) -> str:
        # The runtime writes the node trailer into the message when it annotates a kernel's error
        # (as TF's messages carry "[[node ...]]"); errors raised with `op` set get it here, once.
        trailer = node_context(self._op)
        return self._message if trailer in self._message else self._message + trailer

    def __reduce__(self) -> Any:
        return type(self), (None, None, self._message, self._error_code)


def node_context(op: Any) -> str:
    """TF1's trailer naming the failing node and the line of user code that created it:
    `[[node scope/name (defined at model.py:12) ]]`; empty when no op is known."""
    if op is None:
        return ""
    site = getattr(op, "traceback", None)
    where = f" (defined at {site[0]}:{site[1]})" if site else ""
    return f"\n\t [[node {op.name}{where} ]]"


def _make(name: str, code: int, doc: str) -> type:
    def __init__(self: OpError, node_def: Any, op: Any, message: str, *args: Any) -> None:
        OpError.__init__(self, node_def, op, message, code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "error_code": code,
                                   "__reduce__": lambda self: (type(self), (None, None, self.message))})


CancelledError = _make("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op received an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "A deadline expired before the operation completed.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "The caller lacks permission.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The request lacks valid credentials.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource (memory, quota) was exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state required for the operation, "
                                "e.g. reading an uninitialized variable.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "The operation iterated past the valid input range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED,
                           "The operation is not implemented or not supported.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "The runtime is currently unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")

_CODE_TO_CLASS = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, UnauthenticatedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError, InternalError,
    UnavailableError, DataLossError)}


def exception_type_from_error_code(error_code: int) -> type:
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls: type) -> int:
    return cls.error_code  # type: ignore[attr-defined]


class raise_exception_on_not_ok_status:  # noqa: N801  (TF's name)
    """Context manager kept for TF1 source compatibility; errors already raise."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False
