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

    _default_code = UNKNOWN  # each subclass's canonical code

    def __init__(self, node_def: Any, op: Any, message: str, error_code: Optional[int] = None,
                 *args: Any) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = type(self)._default_code if error_code is None else error_code

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
    def error_code(self) -> int:
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


class _CodedError(OpError):
    """The subclasses' signature, as TF's: `(node_def, op, message, *args)`, the code fixed."""

    def __init__(self, node_def: Any, op: Any, message: str, *args: Any) -> None:
        super().__init__(node_def, op, message, type(self)._default_code)

    def __reduce__(self) -> Any:
        return type(self), (None, None, self._message)


class CancelledError(_CodedError):
    """An operation or step was cancelled."""
    _default_code = CANCELLED


class UnknownError(_CodedError):
    """An unknown error."""
    _default_code = UNKNOWN


class InvalidArgumentError(_CodedError):
    """An op received an invalid argument."""
    _default_code = INVALID_ARGUMENT


class DeadlineExceededError(_CodedError):
    """A deadline expired before the operation completed."""
    _default_code = DEADLINE_EXCEEDED


class NotFoundError(_CodedError):
    """A requested entity was not found."""
    _default_code = NOT_FOUND


class AlreadyExistsError(_CodedError):
    """An entity already exists."""
    _default_code = ALREADY_EXISTS


class PermissionDeniedError(_CodedError):
    """The caller lacks permission."""
    _default_code = PERMISSION_DENIED


class UnauthenticatedError(_CodedError):
    """The request lacks valid credentials."""
    _default_code = UNAUTHENTICATED


class ResourceExhaustedError(_CodedError):
    """A resource (memory, quota) was exhausted."""
    _default_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(_CodedError):
    """The system is not in a state required for the operation, e.g. reading an uninitialized
    variable."""
    _default_code = FAILED_PRECONDITION


class AbortedError(_CodedError):
    """The operation was aborted."""
    _default_code = ABORTED


class OutOfRangeError(_CodedError):
    """The operation iterated past the valid input range."""
    _default_code = OUT_OF_RANGE


class UnimplementedError(_CodedError):
    """The operation is not implemented or not supported."""
    _default_code = UNIMPLEMENTED


class InternalError(_CodedError):
    """An internal invariant was broken."""
    _default_code = INTERNAL


class UnavailableError(_CodedError):
    """The runtime is currently unavailable."""
    _default_code = UNAVAILABLE


class DataLossError(_CodedError):
    """Unrecoverable data loss or corruption."""
    _default_code = DATA_LOSS


_CODE_TO_CLASS: dict[int, type[OpError]] = {cls._default_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, UnauthenticatedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError, InternalError,
    UnavailableError, DataLossError)}


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls: type[OpError]) -> int:
    return cls._default_code


class InaccessibleTensorError(ValueError):
    """Fetching a tensor or op marked as not fetchable (`Graph.prevent_fetching`): one built inside
    a tf.while_loop body or a tf.cond branch, whose value exists only in that frame or branch.
    A ValueError, as TF's (errors_impl.InaccessibleTensorError)."""


class raise_exception_on_not_ok_status:  # noqa: N801  (TF's name)
    """Context manager kept for TF1 source compatibility; errors already raise."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
