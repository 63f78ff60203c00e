"""`tf.train.QueueRunner`: threads that keep a queue filled (white paper 4.6).

A QueueRunner holds a queue and a list of enqueue ops; `create_threads` starts one thread per
enqueue op, each running its op in a loop in the given session. When an enqueue fails because
its input is exhausted (OutOfRangeError from an upstream queue or an epoch limit), that thread
ends quietly, and the last one to end closes the queue, so consumers drain what is left and
then see OutOfRangeError themselves. Any other error is reported to the coordinator. With a
coordinator, one more thread waits for a stop request and then closes the queue with
`cancel_pending_enqueues`, which wakes enqueue threads blocked on a full queue.
"""
from __future__ import annotations

import logging
import threading
import weakref
from typing import Any, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.default_session import get_default_session
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.meta_graph import prepend_name_scope, register_proto_function, strip_name_scope
from tensorweave.training.coordinator import Coordinator
from tensorweave.training.queue_runner_def import QueueRunnerDef

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger("tensorweave")


class QueueRunner:
    """Holds a list of enqueue operations for a queue, each to be run in a thread."""

    def __init__(self, queue: Any = None, enqueue_ops: Optional[Sequence[Any]] = None, close_op: Any = None,
                 cancel_op: Any = None, queue_closed_exception_types: Optional[Sequence[type]] = None,
                 queue_runner_def: Any = None, import_scope: Optional[str] = None) -> None:
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
        else:
            self._init_from_args(queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types)
        self._lock = threading.Lock()
        # Per session: how many enqueue threads are still running (the last one closes the queue).
        self._runs_per_session: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    def _init_from_args(self, queue: Any, enqueue_ops: Optional[Sequence[Any]], close_op: Any, cancel_op: Any,
                        queue_closed_exception_types: Optional[Sequence[type]]) -> None:
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            self._queue_closed_exception_types: tuple = (errors.OutOfRangeError,)
        else:
            types = tuple(queue_closed_exception_types)
            if not types or not all(isinstance(t, type) and issubclass(t, errors.OpError) for t in types):
                raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "
                                f"tf.error types, but saw: {queue_closed_exception_types}")
            self._queue_closed_exception_types = types

    def _init_from_proto(self, queue_runner_def: Any, import_scope: Optional[str]) -> None:
        """From a meta graph: the queue is its queue operation (all a runner needs of it is
        the name), the ops are looked up in the default graph under `import_scope`."""
        g = _graph.get_default_graph()

        def element(name: str) -> Any:
            return g.as_graph_element(prepend_name_scope(name, import_scope))

        self._queue = element(queue_runner_def.queue_name)
        self._enqueue_ops = [element(name) for name in queue_runner_def.enqueue_op_name]
        self._close_op = element(queue_runner_def.close_op_name)
        self._cancel_op = element(queue_runner_def.cancel_op_name)
        codes = list(queue_runner_def.queue_closed_exception_types)
        self._queue_closed_exception_types = (tuple(errors.exception_type_from_error_code(c) for c in codes)
                                              if codes else (errors.OutOfRangeError,))

    # -- meta graphs --------------------------------------------------------------------------------
    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        """This runner as a QueueRunnerDef, names relative to `export_scope` (None when the
        queue is outside it)."""
        if export_scope is not None and not self.name.startswith(export_scope.rstrip("/") + "/"):
            return None
        return QueueRunnerDef(
            queue_name=strip_name_scope(self.name, export_scope),
            enqueue_op_name=[strip_name_scope(op.name, export_scope) for op in self._enqueue_ops],
            close_op_name=strip_name_scope(self._close_op.name, export_scope),
            cancel_op_name=strip_name_scope(self._cancel_op.name, export_scope),
            queue_closed_exception_types=[errors.error_code_from_exception_type(t)
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def: Any, import_scope: Optional[str] = None) -> "QueueRunner":
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    # -- properties -------------------------------------------------------------------------------
    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self) -> Any:
        return self._close_op

    @property
    def cancel_op(self) -> Any:
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Exceptions raised by enqueue threads run without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue this runner fills."""
        return self._queue.name

    # -- threads ----------------------------------------------------------------------------------
    def _run(self, sess: Any, enqueue_op: Any, coord: Optional[Coordinator]) -> None:
        """One enqueue thread: run `enqueue_op` until stopped, the input ends, or an error."""
        counted_down = False
        try:
            enqueue = sess.make_callable(enqueue_op)  # no per-call fetch/feed normalisation
            while not (coord is not None and coord.should_stop()):
                try:
                    enqueue()
                except self._queue_closed_exception_types:
                    counted_down = True
                    if self._count_down(sess) == 0:
                        self._run_quietly(sess, self._close_op)
                    return
        except Exception as e:  # noqa: BLE001  (reported, never lost)
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not counted_down:
                self._count_down(sess)

    def _count_down(self, sess: Any) -> int:
        with self._lock:
            self._runs_per_session[sess] -= 1
            return self._runs_per_session[sess]

    @staticmethod
    def _run_quietly(sess: Any, op: Any) -> None:
        # Closing an already closed queue, or in a closed session, is expected at shutdown.
        try:
            sess.run(op)
        except Exception as e:  # noqa: BLE001
            _log.debug("Ignored exception while closing a queue: %s", e)

    def _close_on_stop(self, sess: Any, coord: Coordinator) -> None:
        coord.wait_for_stop()
        self._run_quietly(sess, self._cancel_op)

    def create_threads(self, sess: Any, coord: Optional[Coordinator] = None, daemon: bool = False,
                       start: bool = False) -> list[threading.Thread]:
        """Creates (and with `start`, starts) the threads running the enqueue ops in `sess`,
        plus, with `coord`, one that cancels the queue when a stop is requested. Threads are
        registered with `coord`. Returns [] if this runner's threads are already running in
        `sess`."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            name=f"QueueRunnerThread-{self.name}-close_on_stop"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds `qr` to the graph collection `collection` (started by `start_queue_runners`)."""
    _graph.add_to_collection(collection, qr)


def start_queue_runners(sess: Any = None, coord: Optional[Coordinator] = None, daemon: bool = True,
                        start: bool = True, collection: str = GraphKeys.QUEUE_RUNNERS) -> list[threading.Thread]:
    """Starts the threads of every QueueRunner in the graph collection `collection`, in `sess`
    (default: the default session); returns them (join them with `coord.join`)."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    if not (hasattr(sess, "make_callable") and hasattr(sess, "graph")):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {sess.__class__}")
    runners = sess.graph.get_collection(collection)
    if not runners:
        _log.warning("`tf.train.start_queue_runners()` was called when no queue runners were defined.")
    threads: list[threading.Thread] = []
    with sess.graph.as_default():
        for qr in runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


# Queue runners travel in meta graphs, so an imported input pipeline can be started again.
register_proto_function(GraphKeys.QUEUE_RUNNERS, proto_type=QueueRunnerDef, to_proto=QueueRunner.to_proto,
                        from_proto=QueueRunner.from_proto)
