"""The default-session stack behind `Tensor.eval()`, `Operation.run()` and
`tf.get_default_session()`. Lives in framework/ so the graph never imports the runtime."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional


class _SessionStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Any] = []


_stack = _SessionStack()


def get_default_session() -> Optional[Any]:
    return _stack.stack[-1] if _stack.stack else None


@contextlib.contextmanager
def default_session(session: Any) -> Iterator[Any]:
    _stack.stack.append(session)
    try:
        yield session
    finally:
        _stack.stack.pop()


def push(session: Any) -> None:
    _stack.stack.append(session)


def remove(session: Any) -> None:
    if session in _stack.stack:
        _stack.stack.remove(session)


def run_with_default(fetch: Any, feed_dict: Any, session: Any) -> Any:
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    if session.graph is not fetch.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is "
                         "different from the session's graph.")
    return session.run(fetch, feed_dict)
