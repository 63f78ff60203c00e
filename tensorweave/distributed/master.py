"""The master service (white paper 3.3, Figure 4; OSDI 3.3): sessions over a cluster.

A client's session lives here as a `MasterSession`: its graph (replaced when the client's graph
grows: Extend), the devices of every task it may use (`ConfigProto.device_filters`), a placer
over all of them, and one `DistributedPlan` per run signature, built once as in the local
session: prune, optimise (Grappler, grappler/meta_optimizer.py), place, partition per device
with Send/Recv, group the partitions by task and register each task's subgraph on its worker.
A step is then one RunGraph message per task, the in-process worker called directly.

Failures: a RunGraph that fails, a task that does not answer the periodic health check (a dead
process, or one that stopped answering) or that restarted (new incarnation) aborts every task's
part of the running steps that use it with UnavailableError/AbortedError naming the task, so
waiting kernels wake everywhere; the step returns its error without waiting for the failed task.
Later steps that use the task fail at once while it stays unhealthy (a restarted task stays so
for this session: its graphs and state are gone); steps on the other tasks go on. Calls made
while building a plan give up as soon as their task is found unhealthy.
"""
from __future__ import annotations

import itertools
import logging
import random
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.distributed import rpc, wire
from tensorweave.distributed.task_graphs import TaskGraph, task_graphs, task_of
from tensorweave.framework import errors
from tensorweave.framework.device_spec import parse_device
from tensorweave.framework.graph import Graph
from tensorweave.framework.graph_def import GraphDef
from tensorweave.framework.importer import import_graph_def
from tensorweave.grappler import meta_optimizer
from tensorweave.runtime import pruning
from tensorweave.runtime.config import ConfigProto, RunMetadata
from tensorweave.runtime.cost_model import CostModel
from tensorweave.runtime.device import Device
from tensorweave.runtime.partition import PartitionOptions, partition_graph
from tensorweave.runtime.placer import Placer

_log = logging.getLogger("tensorweave.distributed")

HEALTH_INTERVAL_S = 1.0   # how often a master session checks its tasks
HEALTH_TIMEOUT_S = 2.0    # a task that does not answer within this is unavailable
QUICK_STATUS_S = 1.0      # CreateSession's first look at a task
ABORT_GRACE_S = 5.0       # after an abort, how long a step waits for the other tasks to stop
CREATE_SESSION_WAIT_S = 600.0  # how long CreateSession waits for tasks to come up


def _uint8(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def _parse(proto: Any, tensor: Any, what: str) -> Any:
    if not isinstance(tensor, np.ndarray) or tensor.dtype != np.uint8:
        raise errors.InvalidArgumentError(None, None, f"{what} is missing")
    try:
        proto.ParseFromString(tensor.tobytes())
    except Exception as err:  # noqa: BLE001  (protobuf's DecodeError)
        raise errors.InvalidArgumentError(None, None, f"Bad {what}: {err}") from None
    return proto


class _Step:
    """One running step: its plan, pending task calls, results and first error."""

    def __init__(self, step_id: int, plan: "DistributedPlan") -> None:
        self.step_id = step_id
        self.plan = plan
        self.results: list[Any] = [None] * plan.num_fetches
        self.error: Optional[BaseException] = None
        self.pending = 0
        self.stats: Any = None  # a StepStats proto when the step is traced
        self.calls: dict[str, Any] = {}  # task -> its RunGraph call in flight (remote tasks)
        self.lock = threading.Lock()
        self.done = threading.Event()

    def fail(self, error: BaseException) -> bool:
        with self.lock:
            if self.error is not None:
                return False
            self.error = error
        self.done.set()
        return True


class DistributedPlan:
    """A run signature over the cluster: each task's registered subgraph and its share of the
    feeds and fetches."""

    def __init__(self, session: "MasterSession", feeds: Sequence[str], fetches: Sequence[str],
                 targets: Sequence[str]) -> None:
        graph = session.graph
        try:
            feed_tensors = [graph.get_tensor_by_name(n) for n in feeds]
            fetch_tensors = [graph.get_tensor_by_name(n) for n in fetches]
            target_ops = [graph.get_operation_by_name(n) for n in targets]
        except (KeyError, ValueError) as err:
            raise errors.InvalidArgumentError(None, None, f"Run names an unknown node: {err}") from None
        ops = pruning.prune(fetch_tensors, target_ops, set(feed_tensors))
        # Grappler on the whole step graph, before placement, with the session's rewrite
        # options, as TF's master does (the workers get the optimised partitions and run no
        # passes of their own). Fetched tensors keep their names.
        ops, fetch_tensors = meta_optimizer.optimize(ops, fetch_tensors, target_ops, feed_tensors, session.config,
                                                     session.devices)
        assignment = session.placer.place(ops, feed_tensors)
        if session.pending and session.await_tasks({task_of(d.name) for d in assignment.values()}):
            assignment = session.placer.place(ops, feed_tensors)  # a task has more devices than assumed
        options = PartitionOptions(compress_float32=session.config.graph_options.enable_bfloat16_sendrecv)
        feed_index = {t: i for i, t in enumerate(feed_tensors)}
        partitions = partition_graph(ops, assignment, feed_index, fetch_tensors, session.devices, options)
        self.num_fetches = len(fetches)
        self.graphs: list[TaskGraph] = list(task_graphs(partitions, target_ops).values())
        # The in-process task last: the remote calls start first, then it runs on this thread.
        self.graphs.sort(key=lambda g: g.task == session.master.task)
        self.tasks = frozenset(g.task for g in self.graphs)
        self.handles: list[str] = []
        registered: list[tuple[str, str]] = []
        config = _uint8(session.config.SerializeToString())
        try:
            for g in self.graphs:
                reply = session.call_watched(
                    g.task, "RegisterGraph", {"incarnations": session.incarnations, "session": session.handle},
                    [("graph_def", _uint8(g.graph_def.SerializeToString())), ("config", config)])
                handle = str(reply.header["handle"])
                self.handles.append(handle)
                registered.append((g.task, handle))
        except BaseException:
            session.deregister(registered)
            raise
        self.registered = registered
        self.headers = [{"handle": h, "feeds": [n for _, n in g.feeds], "fetches": [n for _, n in g.fetches],
                         "targets": g.targets} for h, g in zip(self.handles, self.graphs)]
        self.feed_names = [[n for _, n in g.feeds] for g in self.graphs]
        self.feed_indices = [[i for i, _ in g.feeds] for g in self.graphs]
        self.fetch_indices = [[i for i, _ in g.fetches] for g in self.graphs]


class MasterSession:
    def __init__(self, master: "Master", handle: str, graph_def: Any, config: Any) -> None:
        self.master = master
        self.handle = handle
        self.config = config
        ms = config.operation_timeout_in_ms
        self.call_timeout: Optional[float] = ms / 1000.0 if ms > 0 else None
        self.tasks = master.tasks_for(list(config.device_filters))
        self.devices: list[Any] = []
        self.incarnations: dict[str, int] = {}
        self.task_incarnations: dict[str, int] = {}
        self._discover_devices()
        self.placer = Placer(self.devices, config.allow_soft_placement, config.log_device_placement,
                             CostModel(), default_task=parse_device(master.task))
        self.graph = Graph()
        self._graph_lock = threading.Lock()
        self.plans: dict[Any, DistributedPlan] = {}
        self._plans_lock = threading.Lock()
        self.running: dict[int, _Step] = {}
        self.unhealthy: dict[str, BaseException] = {}
        self.closed = False
        self._stop = threading.Event()
        self.extend(graph_def)
        self._health = threading.Thread(target=self._check_health, name=f"tw-health-{handle}", daemon=True)
        self._health.start()

    def client(self, task: str) -> Any:
        return self.master.client(task)

    def _discover_devices(self) -> None:
        """Every task's devices (the master's own task first: fed values enter there). A task
        that does not answer at once is assumed to have its CPU device and is waited for only if
        a plan places work there (`await_tasks`): a worker of between-graph replication never
        depends on the other workers being up, or still up."""
        ordered = sorted(self.tasks, key=lambda t: t != self.master.task)
        self.pending: set[str] = set()
        for task in ordered:
            try:
                reply = self.client(task).call("GetStatus", {}, timeout=QUICK_STATUS_S)
            except (errors.UnavailableError, errors.DeadlineExceededError):
                self.pending.add(task)
                spec = parse_device(f"{task}/device:CPU:0")
                self.devices.append(Device(spec, np, 1))
                continue
            self._add_devices(task, reply.header)

    def _add_devices(self, task: str, status: dict) -> None:
        self.task_incarnations[task] = int(status["incarnation"])
        for name, device_type, incarnation, memory in status["devices"]:
            device = Device(parse_device(name), np, 1, memory_limit=memory or None)
            device.incarnation = int(incarnation)
            self.devices.append(device)
            self.incarnations[device.name] = int(incarnation)

    def await_tasks(self, tasks: set[str]) -> bool:
        """Waits for the pending tasks among `tasks` (as TF's CreateSession waits for its
        workers, logging while it waits) and learns their devices; True if that changed the
        device list (the plan must be placed again)."""
        changed = False
        for task in sorted(tasks & self.pending):
            deadline = time.monotonic() + (self.call_timeout or CREATE_SESSION_WAIT_S)
            last_log = time.monotonic()
            while True:
                try:
                    reply = self.client(task).call("GetStatus", {}, timeout=HEALTH_TIMEOUT_S, wait_for_ready=True)
                    break
                except (errors.UnavailableError, errors.DeadlineExceededError) as err:
                    now = time.monotonic()
                    if now >= deadline:
                        raise errors.UnavailableError(None, None,
                                                      f"Task {task} did not come up: {err.message}") from None
                    if now - last_log > 10:
                        _log.info("CreateSession still waiting for response from worker: %s", task)
                        last_log = now
                    time.sleep(0.1)
            placeholder = [d for d in self.devices if task_of(d.name) == task]
            names = sorted(name for name, *_ in reply.header["devices"])
            if names == sorted(d.name for d in placeholder):
                self.task_incarnations[task] = int(reply.header["incarnation"])
                for name, _, incarnation, _ in reply.header["devices"]:
                    device = next(d for d in placeholder if d.name == name)
                    device.incarnation = int(incarnation)
                    self.incarnations[name] = int(incarnation)
            else:
                self.devices[:] = [d for d in self.devices if task_of(d.name) != task]
                self._add_devices(task, reply.header)
                self.placer.devices = list(self.devices)
                changed = True
            self.pending.discard(task)
        return changed

    # -- the graph --------------------------------------------------------------------------------
    def extend(self, graph_def: Any) -> None:
        """The client's graph (sent whole when it changed since the last step)."""
        graph = Graph()
        with graph.as_default():
            import_graph_def(graph_def, name="")
        with self._graph_lock:
            self.graph = graph
            with self._plans_lock:
                old = list(self.plans.values())
                self.plans = {}
        for plan in old:
            self.deregister(plan.registered)

    def deregister(self, registered: Sequence[tuple[str, str]], closing: bool = False) -> None:
        """Drops graphs on their tasks; `closing`: the session ends, so does its state on every
        task (stateful kernels: queues without a shared name, random generators)."""
        by_task: dict[str, list[str]] = {t: [] for t in self.tasks} if closing else {}
        for task, handle in registered:
            by_task.setdefault(task, []).append(handle)
        for task, handles in by_task.items():
            if task in self.unhealthy:  # gone, restarted or not answering: nothing to tell it
                continue
            header: dict[str, Any] = {"handles": handles}
            if closing:
                header["close_session"] = self.handle
            try:
                self.client(task).call("DeregisterGraph", header, timeout=HEALTH_TIMEOUT_S)
            except errors.OpError:
                pass  # the task is gone: so are its graphs

    def call_watched(self, task: str, method: str, header: dict, tensors: Sequence[tuple[str, Any]]) -> wire.Message:
        """A call (within the operation timeout, if set) that fails as soon as the health check
        finds its task unhealthy, rather than waiting on a task that stopped answering."""
        self.raise_if_unhealthy((task,))
        client = self.client(task)
        if isinstance(client, rpc.LocalClient):
            return client.call(method, header, tensors)
        outcome: list[Any] = []
        done = threading.Event()

        def finished(error: Optional[BaseException], reply: Optional[wire.Message]) -> None:
            outcome.extend((error, reply))
            done.set()

        future = client.call_async(method, header, tensors, finished, timeout=self.call_timeout)
        while not done.wait(0.1):
            if task in self.unhealthy:
                future.cancel()
                self.raise_if_unhealthy((task,))
        done.wait()
        if outcome[0] is not None:
            raise outcome[0]
        return outcome[1]

    def raise_if_unhealthy(self, tasks: Any) -> None:
        for task in tasks:
            err = self.unhealthy.get(task)
            if err is not None:
                raise type(err)(None, None, err.message) if isinstance(err, errors.OpError) else err

    def plan(self, feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str]) -> DistributedPlan:
        key = (tuple(feeds), tuple(fetches), tuple(targets))
        plan = self.plans.get(key)
        if plan is None:
            with self._plans_lock:
                plan = self.plans.get(key)
                if plan is None:
                    plan = self.plans[key] = DistributedPlan(self, feeds, fetches, targets)
        return plan

    # -- steps ------------------------------------------------------------------------------------
    def run(self, feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str],
            values: Sequence[Any], timeout: Optional[float], step_stats: Any = None) -> list[Any]:
        """Runs a step; with `step_stats` (a StepStats proto) every task traces its part into it."""
        if self.closed:
            raise errors.AbortedError(None, None, f"Session {self.handle} is closed")
        plan = self.plan(feeds, fetches, targets)
        if self.unhealthy:
            self.raise_if_unhealthy(plan.tasks)
        step = _Step(self.master.new_step_id(), plan)
        step.stats = step_stats
        timeout = timeout or self.call_timeout
        self.running[step.step_id] = step
        try:
            self._run(plan, step, values, timeout)
        finally:
            self.running.pop(step.step_id, None)
        if step.error is not None:
            raise step.error
        return step.results

    def _run(self, plan: DistributedPlan, step: _Step, values: Sequence[Any], timeout: Optional[float]) -> None:
        local_index = None
        step.pending = len(plan.graphs)
        if not plan.graphs:  # nothing to run (no fetches, no targets): no call would end the step
            return
        for i, (g, header) in enumerate(zip(plan.graphs, plan.headers)):
            header = dict(header, step=step.step_id, timeout=timeout)
            if step.stats is not None:
                header["trace"] = True
            tensors = [(name, values[j]) for name, j in zip(plan.feed_names[i], plan.feed_indices[i])]
            client = self.client(g.task)
            if isinstance(client, rpc.LocalClient):
                local_index = i
                local_call = (client, header, tensors)
                continue
            step.calls[g.task] = client.call_async("RunGraph", header, tensors, self._finisher(plan, step, i),
                                                   timeout=timeout)
        if local_index is not None:
            client, header, tensors = local_call
            try:
                reply: Optional[wire.Message] = client.call("RunGraph", header, tensors)
                error: Optional[BaseException] = None
            except errors.OpError as err:
                reply, error = None, err
            self._finisher(plan, step, local_index)(error, reply)
        deadline = None if timeout is None else time.monotonic() + timeout
        while not step.done.wait(0.5):
            if deadline is not None and time.monotonic() > deadline:
                self._abort(plan, step, errors.DeadlineExceededError(None, None, "Timed out waiting for notification"))
        if step.error is not None:
            # Give the other tasks a moment to end their part (they were told to; a task that
            # stopped answering is not waited for), never a hang.
            end = time.monotonic() + ABORT_GRACE_S
            while step.pending > 0 and time.monotonic() < end:
                time.sleep(0.01)

    def _finisher(self, plan: DistributedPlan, step: _Step,
                  index: int) -> Callable[[Optional[BaseException], Optional[wire.Message]], None]:
        def finished(error: Optional[BaseException], reply: Optional[wire.Message]) -> None:
            if error is None and reply is not None:
                names = plan.headers[index]["fetches"]
                for name, j in zip(names, plan.fetch_indices[index]):
                    value = reply.tensors.get(name)
                    step.results[j] = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
                stats = reply.tensors.get("step_stats")
                if step.stats is not None and isinstance(stats, np.ndarray):
                    with step.lock:
                        step.stats.MergeFromString(stats.tobytes())
            with step.lock:
                step.pending -= 1
                last = step.pending == 0
            if error is not None:
                self._abort(plan, step, error)
            if last:
                step.done.set()
        return finished

    def _abort(self, plan: DistributedPlan, step: _Step, error: BaseException,
               unresponsive: Optional[str] = None) -> None:
        """Fails the step and tells every task of it to end its part. `unresponsive`: a task
        that stopped answering: its RunGraph is not waited for, and the other tasks cut off
        their pushes to it."""
        if not step.fail(error):
            return
        header = dict(wire.error_header(error), step=step.step_id)
        if unresponsive is not None:
            header["unresponsive"] = unresponsive
            call = step.calls.get(unresponsive)
            if call is not None:
                call.cancel()  # its callback counts the task as done
        for g in plan.graphs:
            client = self.client(g.task)
            try:
                if isinstance(client, rpc.LocalClient):
                    client.call("AbortStep", header)
                else:
                    client.call_async("AbortStep", header, [], lambda e, r: None, timeout=HEALTH_TIMEOUT_S)
            except errors.OpError:
                pass

    # -- health -----------------------------------------------------------------------------------
    def _check_health(self) -> None:
        """Every HEALTH_INTERVAL_S, asks all remote tasks at once for their status."""
        while not self._stop.wait(HEALTH_INTERVAL_S):
            replies: dict[str, tuple[Optional[BaseException], Optional[wire.Message]]] = {}
            done = threading.Event()
            # Only the tasks this session's plans use (and that have come up): a worker of
            # between-graph replication does not depend on the other workers.
            used = {t for plan in list(self.plans.values()) for t in plan.tasks}
            remote = [t for t in sorted(used)
                      if t not in self.pending and not isinstance(self.client(t), rpc.LocalClient)]
            if not remote:
                continue

            def answered(task: str) -> Callable[[Optional[BaseException], Optional[wire.Message]], None]:
                def record(error: Optional[BaseException], reply: Optional[wire.Message]) -> None:
                    replies[task] = (error, reply)
                    if len(replies) == len(remote):
                        done.set()
                return record

            for task in remote:
                try:
                    self.client(task).call_async("GetStatus", {}, [], answered(task), timeout=HEALTH_TIMEOUT_S)
                except ValueError as err:  # the channel was closed: this task's server is stopping
                    answered(task)(errors.CancelledError(None, None, str(err)), None)
            done.wait(HEALTH_TIMEOUT_S + 1.0)
            if self._stop.is_set():
                return
            for task in remote:
                error, reply = replies.get(task, (errors.DeadlineExceededError(None, None, "no reply"), None))
                self._health_of(task, error, reply)

    def _health_of(self, task: str, error: Optional[BaseException], reply: Optional[wire.Message]) -> None:
        if isinstance(error, errors.CancelledError):
            return  # the call was cut off here (a channel closed): no news about the task
        if error is None and reply is not None:
            if int(reply.header.get("incarnation", 0)) == self.task_incarnations.get(task):
                self.unhealthy.pop(task, None)
                return
            error = errors.AbortedError(None, None, f"Task {task} restarted (new incarnation); its state and "
                                        "registered graphs are gone")
        unresponsive = None
        if isinstance(error, errors.DeadlineExceededError):
            unresponsive = task
            error = errors.UnavailableError(None, None, f"Task {task} stopped answering: no reply to the health "
                                            f"check within {HEALTH_TIMEOUT_S:g} s")
        elif isinstance(error, errors.UnavailableError):
            error = errors.UnavailableError(None, None, f"Task {task} is unavailable: {error.message}")
        elif not isinstance(error, errors.OpError):
            error = errors.UnavailableError(None, None, f"Task {task} failed the health check: {error}")
        if task not in self.unhealthy:
            _log.warning("%s", error.message)
        self.unhealthy[task] = error
        self._fail_running(task, error, unresponsive)

    def _fail_running(self, task: str, error: BaseException, unresponsive: Optional[str] = None) -> None:
        for step in list(self.running.values()):
            if task in step.plan.tasks:
                self._abort(step.plan, step, error, unresponsive)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        error = errors.CancelledError(None, None, "Session has been closed.")
        for step in list(self.running.values()):
            self._abort(step.plan, step, error)
        self.deregister([r for plan in list(self.plans.values()) for r in plan.registered], closing=True)
        self.plans = {}


class Master:
    """The master service of one task: client sessions over the cluster."""

    def __init__(self, task: str, cluster: Any, local_worker: Any) -> None:
        self.task = task
        self.cluster = cluster
        self.local_worker = local_worker
        self.sessions: dict[str, MasterSession] = {}
        self._handles = itertools.count(1)
        self._step_base = random.getrandbits(40) << 22
        self._steps = itertools.count(1)
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}

    def new_step_id(self) -> int:
        """Unique across masters (several clients run steps on the same tasks)."""
        return self._step_base + next(self._steps)

    def client(self, task: str) -> Any:
        found = self._clients.get(task)
        if found is None:
            if task == self.task:
                found = rpc.LocalClient(self.local_worker.handlers())
            else:
                found = self.local_worker.client(task)
            self._clients[task] = found
        return found

    def tasks_for(self, filters: Sequence[str]) -> list[str]:
        tasks = [f"/job:{job}/replica:0/task:{index}" for job in self.cluster.jobs
                 for index in self.cluster.task_indices(job)]
        if filters:
            specs = [parse_device(f) for f in filters]
            tasks = [t for t in tasks if t == self.task or any(s.is_compatible_with(parse_device(t)) for s in specs)]
        if self.task not in tasks:
            tasks.insert(0, self.task)
        return tasks

    def _session(self, header: dict) -> MasterSession:
        session = self.sessions.get(str(header.get("session")))
        if session is None:
            raise errors.AbortedError(None, None, f"Session {header.get('session')!r} is not found. Possibly, "
                                      "this master has restarted.")
        return session

    # -- service methods --------------------------------------------------------------------------
    def create_session(self, message: wire.Message) -> tuple[dict, list]:
        graph_def = _parse(GraphDef(), message.tensors.get("graph_def"), "CreateSession's graph_def")
        config = ConfigProto()
        if "config" in message.tensors:
            _parse(config, message.tensors["config"], "CreateSession's config")
        handle = f"{self._step_base:x}-{next(self._handles)}"
        try:
            session = MasterSession(self, handle, graph_def, config)
        except (ValueError, TypeError, KeyError) as err:
            raise errors.InvalidArgumentError(None, None, f"CreateSession: {err}") from None
        with self._lock:
            self.sessions[handle] = session
        return {"session": handle}, []

    def extend_session(self, message: wire.Message) -> tuple[dict, list]:
        session = self._session(message.header)
        graph_def = _parse(GraphDef(), message.tensors.get("graph_def"), "ExtendSession's graph_def")
        try:
            session.extend(graph_def)
        except (ValueError, TypeError, KeyError) as err:
            raise errors.InvalidArgumentError(None, None, f"ExtendSession: {err}") from None
        return {}, []

    def run_step(self, message: wire.Message) -> tuple[dict, list]:
        header = message.header
        session = self._session(header)
        feeds, fetches, targets = header.get("feeds", []), header.get("fetches", []), header.get("targets", [])
        if not all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in (feeds, fetches, targets)):
            raise errors.InvalidArgumentError(None, None, "RunStep: feeds, fetches and targets must be name lists")
        values = []
        for name in feeds:
            value = message.tensors.get(name)
            if value is None or value is wire.DEAD:
                raise errors.InvalidArgumentError(None, None, f"RunStep: no value for feed {name}")
            values.append(value)
        timeout = header.get("timeout")
        timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
        metadata = RunMetadata() if header.get("trace") else None
        results = session.run(feeds, fetches, targets, values, timeout,
                              None if metadata is None else metadata.step_stats)
        replies = list(zip((f"{i}" for i in range(len(results))), results))
        if metadata is not None:
            replies.append(("step_stats", _uint8(metadata.step_stats.SerializeToString())))
        if header.get("partition_graphs"):  # RunOptions.output_partition_graphs: each task's subgraph
            plan = session.plan(feeds, fetches, targets)
            replies += [(f"partition_graph:{i}", _uint8(g.graph_def.SerializeToString()))
                        for i, g in enumerate(plan.graphs)]
        return {}, replies

    def close_session(self, message: wire.Message) -> tuple[dict, list]:
        with self._lock:
            session = self.sessions.pop(str(message.header.get("session")), None)
        if session is not None:
            session.close()
        return {}, []

    def reset(self, message: wire.Message) -> tuple[dict, list]:
        """Closes every session of this master and clears the containers on every task."""
        containers = message.header.get("containers")
        with self._lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            session.close()
        for task in self.tasks_for([]):
            self.client(task).call("CleanupContainers", {"containers": containers}, timeout=HEALTH_TIMEOUT_S * 5)
        return {}, []

    def list_devices(self, message: wire.Message) -> tuple[dict, list]:
        devices = []
        for task in self.tasks_for([]):
            try:
                reply = self.client(task).call("GetStatus", {}, timeout=HEALTH_TIMEOUT_S)
            except errors.OpError:
                continue
            devices.extend(reply.header["devices"])
        return {"devices": devices}, []

    def handlers(self) -> dict[str, rpc.Handler]:
        return {"CreateSession": self.create_session, "ExtendSession": self.extend_session,
                "RunStep": self.run_step, "CloseSession": self.close_session, "Reset": self.reset,
                "ListDevices": self.list_devices}

    def shutdown(self) -> None:
        with self._lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            session.close()
