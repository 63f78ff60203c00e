"""tf.train.Supervisor (TF 1.x): the pre-MonitoredTrainingSession way to train. It builds the
init, ready, local-init, summary and saver pieces from the graph (or TF's defaults), finalizes
the graph, and hands out a session prepared by a SessionManager: the chief restores from the
logdir's latest checkpoint or initializes, other tasks wait for the chief. The chief's
"standard services" are background LooperThreads on the supervisor's Coordinator that save a
checkpoint every `save_model_secs`, a merged summary every `save_summaries_secs` and the step
rate alongside it."""
from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import Any, Callable, Iterator, Optional, Sequence

from tensorboard.compat.proto import event_pb2, summary_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.graph_def import write_graph
from tensorweave.framework.meta_graph import create_meta_graph_def
from tensorweave.ops.control_flow.grouping import group
from tensorweave.ops.state.variables import (global_variables, global_variables_initializer,
                                             local_variables_initializer, report_uninitialized_variables)
from tensorweave.ops.summary import merge_all
from tensorweave.summary.writer import FileWriter
from tensorweave.training import coordinator
from tensorweave.training.saver import Saver
from tensorweave.training.session_manager import SessionManager
from tensorweave.training.training_util import global_step as _global_step_value

_log = logging.getLogger("tensorflow")
_VARIABLE_OP_TYPES = ("Variable", "VariableV2")


def _first_in_collection(key: str) -> Any:
    """The first item of the default graph's collection `key`, or None."""
    items = _graph.get_collection(key)
    if len(items) > 1:
        _log.info("Found %d %s operations. Returning the first one.", len(items), key)
    return items[0] if items else None


class Supervisor:
    """Session creation, checkpoints, summaries and a stop-coordinator for a training program."""

    # A sentinel: "build this piece from the graph's collections, or TF's default".
    USE_DEFAULT = 0

    def __init__(self, graph: Optional[_graph.Graph] = None, ready_op: Any = USE_DEFAULT,
                 ready_for_local_init_op: Any = USE_DEFAULT, is_chief: bool = True, init_op: Any = USE_DEFAULT,
                 init_feed_dict: Optional[dict] = None, local_init_op: Any = USE_DEFAULT,
                 logdir: Optional[str] = None, summary_op: Any = USE_DEFAULT, saver: Any = USE_DEFAULT,
                 global_step: Any = USE_DEFAULT, save_summaries_secs: float = 120, save_model_secs: float = 600,
                 recovery_wait_secs: float = 30, stop_grace_secs: float = 120,
                 checkpoint_basename: str = "model.ckpt", session_manager: Optional[SessionManager] = None,
                 summary_writer: Any = USE_DEFAULT, init_fn: Optional[Callable[[Any], None]] = None,
                 local_init_run_options: Any = None) -> None:
        if graph is None:
            graph = _graph.get_default_graph()
        with graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
        self._graph = graph
        self._meta_graph_def = create_meta_graph_def(
            graph_def=graph.as_graph_def(add_shapes=True), graph=graph,
            saver_def=self._saver.saver_def if self._saver else None)
        self._is_chief = is_chief
        self._coord = coordinator.Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        # Only a chief writes checkpoints and events; the others keep these at None.
        self._logdir: Optional[str] = None
        self._save_summaries_secs: Optional[float] = None
        self._save_model_secs: Optional[float] = None
        self._save_path: Optional[str] = None
        self._summary_writer: Any = None
        self._graph_added_to_summary = False
        if is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if logdir:
                    self._summary_writer = FileWriter(logdir)
            else:
                self._summary_writer = summary_writer
        if session_manager is None:
            session_manager = SessionManager(
                local_init_op=self._local_init_op, ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op, graph=graph,
                recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)
        self._session_manager = session_manager
        self._verify_setup()
        graph.finalize()  # nothing may be added to the graph from here on

    # -- building the pieces (each: the argument, else the collection, else TF's default) --

    def _init_ready_op(self, ready_op: Any, ready_for_local_init_op: Any) -> None:
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = _first_in_collection(GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = report_uninitialized_variables()
                _graph.add_to_collection(GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        # No default op here (TF keeps None for programs written before the argument existed).
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = _first_in_collection(GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op: Any, init_feed_dict: Optional[dict]) -> None:
        if init_op is Supervisor.USE_DEFAULT:
            init_op = _first_in_collection(GraphKeys.INIT_OP)
            if init_op is None:
                init_op = global_variables_initializer()
                _graph.add_to_collection(GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op: Any) -> None:
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = _first_in_collection(GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                tables = _graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
                local_init_op = group(local_variables_initializer(), group(*tables, name="init_all_tables"))
                _graph.add_to_collection(GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, saver: Any) -> None:
        if saver is Supervisor.USE_DEFAULT:
            saver = _first_in_collection(GraphKeys.SAVERS)
            if saver is None and global_variables():
                saver = Saver()
                _graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op: Any) -> None:
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = _first_in_collection(GraphKeys.SUMMARY_OP)
            if summary_op is None:
                summary_op = merge_all()
                if summary_op is not None:
                    _graph.add_to_collection(GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, global_step: Any) -> None:
        if global_step is Supervisor.USE_DEFAULT:
            global_step = _first_in_collection(GraphKeys.GLOBAL_STEP)
            if global_step is None:
                global_step = self._default_global_step_tensor()
                if global_step is not None:
                    _graph.add_to_collection(GraphKeys.GLOBAL_STEP, global_step)
        self._global_step = global_step

    @staticmethod
    def _default_global_step_tensor() -> Any:
        """The tensor named "global_step:0" when it is an integer, else None."""
        try:
            gs = _graph.get_default_graph().get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
        if gs.dtype.base_dtype in (_dtypes.int32, _dtypes.int64):
            return gs
        _log.warning("Found 'global_step' is not an int type: %s", gs.dtype)
        return None

    def _verify_setup(self) -> None:
        # A task other than the chief means replicas: their variables must be placed explicitly.
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in _VARIABLE_OP_TYPES and not op.device:
                raise ValueError(f"When using replicas, all Variables must have their device set: {op}")

    # -- properties --

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

    @property
    def coord(self) -> coordinator.Coordinator:
        return self._coord

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> Optional[dict]:
        return self._init_feed_dict

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def summary_writer(self) -> Any:
        return self._summary_writer

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def save_summaries_secs(self) -> Optional[float]:
        return self._save_summaries_secs

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def save_model_secs(self) -> Optional[float]:
        return self._save_model_secs

    @property
    def save_path(self) -> Optional[str]:
        return self._save_path

    # -- sessions and services --

    def _write_graph(self) -> None:
        """graph.pbtxt into the logdir, and the graph and meta graph into the event file once."""
        if self._logdir:
            write_graph(self._graph.as_graph_def(add_shapes=True), self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            self._summary_writer.add_graph(graph_def=self._graph.as_graph_def(add_shapes=True))
            self._summary_writer.add_meta_graph(self._meta_graph_def)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess: Any) -> Optional[list[coordinator.LooperThread]]:
        """Starts the chief's summary, step-counter and checkpoint threads; returns them (None,
        with a warning, when there is no logdir)."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. "
                               "Because only chief supervisors can write events.")
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            # TensorBoard purges events past a START only when it knows the step.
            self._summary_writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START),
                                                 _global_step_value(sess, self._global_step))
        threads: list[coordinator.LooperThread] = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for thread in threads:
            thread.start()
        return threads

    def prepare_or_wait_for_session(self, master: str = "", config: Any = None, wait_for_checkpoint: bool = False,
                                    max_wait_secs: float = 7200, start_standard_services: bool = True) -> Any:
        """The chief's session, restored from the logdir or initialized (then the standard
        services), or, for another task, a session once the chief made the model ready; the
        queue runners are started on it."""
        # A program may make a session again after a stop: let the coordinator's threads run.
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess: Any, queue_runners: Optional[Sequence[Any]] = None) -> list[Any]:
        """Starts the threads of `queue_runners` (default: the graph's QUEUE_RUNNERS) on the
        supervisor's coordinator."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads: list[Any] = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs: Optional[float], target: Callable[..., Any],
             args: Optional[Sequence[Any]] = None, kwargs: Optional[dict] = None) -> coordinator.LooperThread:
        """Starts a thread calling `target(*args, **kwargs)` every `timer_interval_secs` (back
        to back when None) until a stop is requested; `stop()` joins it."""
        return coordinator.LooperThread.loop(self._coord, timer_interval_secs, target, args, kwargs)

    def stop(self, threads: Optional[Sequence[Any]] = None, close_summary_writer: bool = True,
             ignore_live_threads: bool = False) -> None:
        """Requests a stop and joins the threads (default: every thread registered with the
        coordinator), re-raising what one of them reported; the session stays open."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            # Last, as the threads just joined may have been writing to it. The session may be
            # gone already, so the STOP event carries no step.
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex: Any = None) -> None:
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self) -> Any:
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def summary_computed(self, sess: Any, summary: Any, global_step: Optional[int] = None) -> None:
        """Writes a Summary (proto or serialized bytes) at `global_step` (default: its current value)."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = _global_step_value(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master: str = "", config: Any = None, start_standard_services: bool = True,
                        close_summary_writer: bool = True) -> Iterator[Any]:
        """A prepared session for a `with` block. An exception from the block or a service
        thread stops the supervisor and is raised again once the threads are joined and the
        session closed; OutOfRangeError (inputs exhausted) ends the block quietly."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as err:  # noqa: BLE001 - handed to the coordinator, which re-raises it
            self.request_stop(err)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                # Closing also cancels enqueue/dequeue calls still blocked; its errors do not matter.
                if sess is not None:
                    with contextlib.suppress(Exception):
                        sess.close()

    # TF's original CamelCase names.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class SVSummaryThread(coordinator.LooperThread):
    """Runs the summary op every save_summaries_secs and writes its result."""

    def __init__(self, sv: Supervisor, sess: Any) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(coordinator.LooperThread):
    """Writes "<step counter op>/sec", the step rate, every save_summaries_secs."""

    def __init__(self, sv: Supervisor, sess: Any, step_counter: Any = None) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._last_time = 0.0
        self._last_step = 0
        self._logged = 0

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = _global_step_value(self._sess, self._step_counter)

    def run_loop(self) -> None:
        step = _global_step_value(self._sess, self._step_counter)
        now = time.time()
        added, elapsed = step - self._last_step, now - self._last_time
        self._last_step, self._last_time = step, now
        rate = added / elapsed if elapsed > 0.0 else float("inf")
        summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=self._summary_tag, simple_value=rate)])
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(summary, step)
        if self._logged < 10:  # TF logs the first ten rates only
            self._logged += 1
            _log.info("%s: %g", self._summary_tag, rate)


class SVTimerCheckpointThread(coordinator.LooperThread):
    """Saves a checkpoint to sv.save_path every save_model_secs."""

    def __init__(self, sv: Supervisor, sess: Any) -> None:
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv, self._sess = sv, sess

    def run_loop(self) -> None:
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = _global_step_value(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                event_pb2.SessionLog(status=event_pb2.SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path),
                step)
