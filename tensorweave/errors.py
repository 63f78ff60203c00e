"""`tf.errors`: TF's error classes and canonical codes (re-exports only; they live in
framework/errors.py)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.framework.errors import (  # noqa: F401
    ABORTED, ALREADY_EXISTS, CANCELLED, DATA_LOSS, DEADLINE_EXCEEDED, FAILED_PRECONDITION, INTERNAL,
    INVALID_ARGUMENT, NOT_FOUND, OK, OUT_OF_RANGE, PERMISSION_DENIED, RESOURCE_EXHAUSTED, UNAUTHENTICATED,
    UNAVAILABLE, UNIMPLEMENTED, UNKNOWN, AbortedError, AlreadyExistsError, CancelledError, DataLossError,
    DeadlineExceededError, FailedPreconditionError, InternalError, InvalidArgumentError, NotFoundError, OpError,
    OutOfRangeError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError, UnavailableError,
    UnimplementedError, UnknownError, error_code_from_exception_type, exception_type_from_error_code,
    raise_exception_on_not_ok_status)

__getattr__ = _module_getattr("errors", __name__)
