"""Per-step state that kernels may see: the step id, cancellation, feeds and fetch slots, and
(for kernels that ask) the frame and iteration they run in (rendezvous keys need it).

A step ends early when it is cancelled (Session.close, an error elsewhere in the step) or
runs past its deadline (RunOptions.timeout_in_ms, ConfigProto.operation_timeout_in_ms). The
executors look at `interrupted()` at their checkpoints (between expensive kernels, at every
loop iteration, when taking work), and a thread waiting for the step wakes at the deadline
and cancels it, which wakes blocked asynchronous kernels through their cancellation
callbacks."""
from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

from tensorweave.framework import errors

if TYPE_CHECKING:
    from tensorweave.framework.kernel_contract import StepView
    from tensorweave.runtime.step_stats import StepTracer

_step_ids = itertools.count(1)

# The value an untaken Switch output (and everything downstream of it) carries.
DEAD = type("DeadValue", (), {"__repr__": lambda self: "<dead>", "__slots__": ()})()


# One lock for every step's CancellationManager: registrations are few (waiting kernels,
# rendezvous aborts) and short, and a lock made per step cost more than all of them (creating
# one takes about 2% of a null step).
_lock = threading.Lock()


class CancellationManager:
    """Callbacks that wake blocked asynchronous kernels when a step is cancelled."""

    __slots__ = ("_callbacks", "_next", "cancelled")

    def __init__(self) -> None:
        self._callbacks: Optional[dict[int, Callable[[BaseException], None]]] = None  # at first use
        self._next = 0
        self.cancelled: Optional[BaseException] = None

    def register(self, callback: Callable[[BaseException], None]) -> Optional[int]:
        """Returns a token, or None if already cancelled (the caller must fail at once)."""
        with _lock:
            if self.cancelled is not None:
                return None
            token = self._next
            self._next += 1
            if self._callbacks is None:
                self._callbacks = {}
            self._callbacks[token] = callback
            return token

    def deregister(self, token: Optional[int]) -> bool:
        with _lock:
            callbacks = self._callbacks
            return callbacks is not None and callbacks.pop(token, None) is not None  # type: ignore[arg-type]

    def cancel(self, error: BaseException) -> None:
        with _lock:
            if self.cancelled is not None:
                return
            self.cancelled = error
            callbacks = list(self._callbacks.values()) if self._callbacks else []
            self._callbacks = None
        for cb in callbacks:
            cb(error)


_new_step = object.__new__
_monotonic = time.monotonic

# TensorFlow's message when a step runs past its deadline (DirectSession::WaitForNotification).
DEADLINE_MESSAGE = "Timed out waiting for notification"


def deadline_exceeded() -> errors.DeadlineExceededError:
    return errors.DeadlineExceededError(None, None, DEADLINE_MESSAGE)


class StepContext:
    """One `Session.run` step (shared by its partitions); kernels see it as a
    kernel_contract.StepView."""

    DEAD = DEAD  # for kernels that handle dead values themselves (Send)

    __slots__ = ("step_id", "feeds", "cancellation", "session_state", "rendezvous", "stats",
                 "step_resources", "frame_id", "iteration", "deadline", "__weakref__")

    def __init__(self, feeds: list[Any], session_state: Any = None, rendezvous: Any = None) -> None:
        self.step_id = next(_step_ids)
        self.feeds = feeds
        self.cancellation = CancellationManager()
        self.session_state = session_state
        self.rendezvous = rendezvous
        self.stats: Optional[StepTracer] = None
        self.step_resources: dict[Any, Any] = {}  # the step container: state that dies with the step
        self.frame_id = ""
        self.iteration = 0
        self.deadline: Optional[float] = None  # time.monotonic() past which the step fails

    def at(self, frame_id: str, iteration: int) -> "StepContext":
        """A view of this step for a kernel running in (frame, iteration). The executor makes
        one per iteration that needs it; it shares everything with the step but the frame
        and iteration (so create it after the step's rendezvous and stats are set)."""
        if frame_id == "" and iteration == 0:
            return self
        view = _new_step(StepContext)
        view.step_id = self.step_id
        view.feeds = self.feeds
        view.cancellation = self.cancellation
        view.session_state = self.session_state
        view.rendezvous = self.rendezvous
        view.stats = self.stats
        view.step_resources = self.step_resources
        view.frame_id = frame_id
        view.iteration = iteration
        view.deadline = self.deadline
        return view

    def interrupted(self) -> Optional[BaseException]:
        """The error that ends this step now, if any: its cancellation, or past its deadline
        DeadlineExceededError (which then cancels the step, waking its blocked kernels)."""
        cancelled = self.cancellation.cancelled
        if cancelled is None and self.deadline is not None and _monotonic() >= self.deadline:
            self.cancellation.cancel(deadline_exceeded())
            cancelled = self.cancellation.cancelled
        return cancelled

    def remaining(self) -> Optional[float]:
        """Seconds left before the deadline (None: no deadline)."""
        return None if self.deadline is None else max(0.0, self.deadline - _monotonic())

    def cancel(self, error: Optional[BaseException] = None) -> None:
        self.cancellation.cancel(error or errors.CancelledError(None, None, "Step was cancelled"))


if TYPE_CHECKING:
    # StepContext is what kernels see as their step (kernel_contract.StepView).
    _view: StepView = StepContext([])
