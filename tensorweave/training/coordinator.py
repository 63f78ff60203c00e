"""`tf.train.Coordinator` and `tf.train.LooperThread`: stopping a set of threads together.

Input pipelines run enqueue loops on background threads (white paper 4.6: queues let input
preparation overlap with training). The coordinator is how those threads and the training loop
agree to stop: any of them calls `request_stop` (optionally with the exception that made it
stop), all of them poll `should_stop`, and the main thread's `join` waits for them, gives
stragglers a grace period, and re-raises the first reported exception so errors on background
threads are never lost. OutOfRangeError ("input exhausted") counts as a clean stop.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from types import TracebackType
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from tensorweave.framework import errors

_log = logging.getLogger("tensorweave")

ExcInfo = tuple[type, BaseException, Optional[TracebackType]]


class Coordinator:
    """Coordinates the termination of a set of threads.

        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        try:
            while not coord.should_stop():
                sess.run(train_op)
        except Exception as e:
            coord.request_stop(e)
        finally:
            coord.request_stop()
            coord.join(threads)

    `clean_stop_exception_types` are exceptions that stop the threads without being re-raised
    by `join` (default: tf.errors.OutOfRangeError).
    """

    def __init__(self, clean_stop_exception_types: Optional[Sequence[type]] = None) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: Optional[ExcInfo] = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    # -- stopping ---------------------------------------------------------------------------------
    def request_stop(self, ex: Any = None) -> None:
        """Asks every thread to stop. `ex` (an exception or a sys.exc_info() triple) is
        reported: the first one not of a clean-stop type is re-raised by `join`. After `join`
        has returned, an exception passed here is raised at once, since nothing would report it."""
        exc_info = self._as_exc_info(ex)
        with self._lock:
            if exc_info is not None and isinstance(exc_info[1], self._clean_stop_exception_types):
                exc_info = None
            if self._joined and exc_info is not None:
                raise exc_info[1].with_traceback(exc_info[2])
            if self._stop_event.is_set():
                return
            if exc_info is not None and self._exc_info_to_raise is None:
                _log.info("Error reported to Coordinator: %s: %s", exc_info[0].__name__, exc_info[1])
                self._exc_info_to_raise = exc_info
            self._stop_event.set()

    @staticmethod
    def _as_exc_info(ex: Any) -> Optional[ExcInfo]:
        if ex is None:
            return None
        if isinstance(ex, tuple):
            if len(ex) != 3 or not isinstance(ex[1], BaseException):
                raise ValueError(f"ex must be an exception or a sys.exc_info() tuple, got {ex!r}")
            return ex  # type: ignore[return-value]
        if isinstance(ex, BaseException):
            return type(ex), ex, ex.__traceback__
        raise ValueError(f"ex must be an exception or a sys.exc_info() tuple, got {ex!r}")

    def clear_stop(self) -> None:
        """Clears the stop request and any reported exception, so the coordinator (and the
        threads that poll it) can be used again."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop has been requested."""
        return self._stop_event.is_set()

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        """Waits up to `timeout` seconds (forever if None) for a stop request; returns whether
        one was made."""
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """A context in which any exception is reported with `request_stop` instead of
        propagating (use it as the body of a thread)."""
        try:
            yield
        except BaseException as ex:  # noqa: BLE001  (every error must reach the coordinator)
            self.request_stop(ex)

    def raise_requested_exception(self) -> None:
        """Raises the exception reported with `request_stop`, if any."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                exc = self._exc_info_to_raise
                raise exc[1].with_traceback(exc[2])

    # -- threads ----------------------------------------------------------------------------------
    def register_thread(self, thread: threading.Thread) -> None:
        """Adds `thread` to the threads that `join` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Optional[Iterable[threading.Thread]] = None, stop_grace_period_secs: float = 120,
             ignore_live_threads: bool = False) -> None:
        """Waits for `threads` (and every registered thread) to end.

        Returns when they have all ended; or, once a stop is requested, waits at most
        `stop_grace_period_secs` more. Then re-raises the first exception reported with
        `request_stop`, or raises RuntimeError naming the threads still running (unless
        `ignore_live_threads`)."""
        with self._lock:
            # Threads registered from here on are not waited for.
            waiting = list(self._registered_threads.union(threads or ()))
        while any(t.is_alive() for t in waiting) and not self._stop_event.wait(0.05):
            pass
        deadline = time.monotonic() + max(0.0, stop_grace_period_secs)
        for t in waiting:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in waiting if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                exc = self._exc_info_to_raise
                raise exc[1].with_traceback(exc[2])
            if stragglers:
                message = f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
                if not ignore_live_threads:
                    raise RuntimeError(message)
                _log.info(message)

    @property
    def joined(self) -> bool:
        return self._joined


class LooperThread(threading.Thread):
    """A daemon thread that calls `run_loop` (or `target`) repeatedly until the coordinator
    asks it to stop: back to back, or every `timer_interval_secs` seconds. Its exceptions are
    reported to the coordinator."""

    def __init__(self, coord: Coordinator, timer_interval_secs: Optional[float],
                 target: Optional[Callable[..., Any]] = None, args: Optional[Sequence[Any]] = None,
                 kwargs: Optional[dict] = None) -> None:
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord}")
        super().__init__(daemon=True)
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        self._loop_args = tuple(args or ())
        self._loop_kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(coord: Coordinator, timer_interval_secs: Optional[float], target: Callable[..., Any],
             args: Optional[Sequence[Any]] = None, kwargs: Optional[dict] = None) -> "LooperThread":
        """Starts a LooperThread calling `target(*args, **kwargs)`; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts."""

    def stop_loop(self) -> None:
        """Called once when the thread stops normally."""

    def run_loop(self) -> None:
        """One iteration; by default calls the target."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
