"""Turns an exception raised inside a kernel into TF's error class for it, naming the node
and the user line that created it."""
from __future__ import annotations

from typing import Any, NoReturn, Optional

from tensorweave.framework import errors


def annotate(err: BaseException, op: Optional[Any]) -> BaseException:
    if isinstance(err, errors.OpError):
        if err.op is None and op is not None:
            new = type(err)(None, op, err.message + errors.node_context(op))
            new.__cause__ = err.__cause__
            return new
        return err
    if isinstance(err, MemoryError):
        cls: type = errors.ResourceExhaustedError
    elif isinstance(err, (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                          OverflowError, ArithmeticError)):
        cls = errors.InvalidArgumentError
    else:
        cls = errors.InternalError
    name = op.name if op is not None else "?"
    new = cls(None, op, f"{type(err).__name__} in node '{name}': {err}{errors.node_context(op)}")
    new.__cause__ = err
    return new


def reraise(err: Exception, op: Optional[Any]) -> NoReturn:
    """Raises `err` as its TF error class, naming `op` (the kernel that raised it)."""
    annotated = annotate(err, op)
    if annotated is err:
        raise err
    raise annotated from err
