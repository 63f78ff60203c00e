"""Sessions on `grpc://host:port` targets: the client side of the master service.

`tf.Session("grpc://...")` keeps the TF1 API (fetch structures, feed conversion, make_callable)
from runtime/session.py and runs each step as one RunStep call to the master of that task; a
master in this process (a `tf.train.Server` started here) is called directly. The graph goes to
the master when the session first runs and again whenever it has changed since (Extend).
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.distributed import rpc, server as _server
from tensorweave.framework import errors
from tensorweave.runtime import session as _session
from tensorweave.runtime.config import timeout_seconds, tracing
from tensorweave.runtime.feeds import UnfeedableConverter, feed_converter
from tensorweave.runtime.fetch_mapper import FetchHandler, feed_expander

PREFIX = "grpc://"


def _master_client(target: str) -> Any:
    master = _server.local_master(target)
    if master is not None:
        return rpc.LocalClient(master.handlers())
    address = target[len(PREFIX):]
    if not address or ":" not in address:
        raise errors.InvalidArgumentError(None, None, f"Bad target {target!r}: expected grpc://host:port")
    return rpc.TaskClient(f"master at {address}", address)


class _RemoteRunCallable:
    """A `run` signature on a remote session: converters and names, built once."""

    def __init__(self, session: Any, backend: "GrpcSessionBackend", fetches: Any, feed_keys: Sequence[Any]) -> None:
        graph = session.graph
        self.version = graph._structure_version
        self.steps = itertools.count()
        self.handler = FetchHandler(graph, fetches)
        self.expand = feed_expander(feed_keys)
        if self.expand is not None:
            feed_keys, self.expand = self.expand
        self.feeds = [_session._feed_tensor(graph, k) for k in feed_keys]
        if len(set(self.feeds)) != len(self.feeds):
            raise ValueError("A tensor is fed more than once.")
        self.converters = [feed_converter(t) for t in self.feeds]
        self.unfeedable = any(isinstance(c, UnfeedableConverter) for c in self.converters)
        self.feed_names = [t.name for t in self.feeds]
        self.fetch_names = [t.name for t in self.handler.tensors]
        self.target_names = [op.name for op in self.handler.targets]
        self.backend = backend

    def __call__(self, session: Any, feed_values: Any, options: Any = None, run_metadata: Any = None) -> Any:
        if self.expand is not None:
            feed_values = self.expand(feed_values)
        feeds = [convert(v) for convert, v in zip(self.converters, feed_values)]
        timeout = timeout_seconds(options, session._config)
        wanted = run_metadata is not None and (tracing(options) or options.output_partition_graphs)
        values = self.backend.run(self.feed_names, feeds, self.fetch_names, self.target_names, timeout,
                                  run_metadata if wanted else None, options)
        return self.handler.build_results(values)


class GrpcSessionBackend:
    """What a `tf.Session` on a grpc:// target holds: the master's client and the session there."""

    def __init__(self, target: str, graph: Any, config: Any) -> None:
        self.target = target
        self.graph = graph
        self.config = config
        self.client = _master_client(target)
        self.handle: Optional[str] = None
        self.sent_version: Any = None
        self.lock = threading.Lock()

    def runner(self, session: Any, fetches: Any, feed_keys: Sequence[Any]) -> _RemoteRunCallable:
        return _RemoteRunCallable(session, self, fetches, feed_keys)

    def _sync_graph(self) -> None:
        """Creates the master session, or extends it with the graph's changes."""
        version = (self.graph.version, self.graph._structure_version)
        if version == self.sent_version:
            return
        with self.lock:
            if version == self.sent_version:
                return
            graph_def = np.frombuffer(self.graph.as_graph_def().SerializeToString(), dtype=np.uint8)
            if self.handle is None:
                config = np.frombuffer(self.config.SerializeToString(), dtype=np.uint8)
                reply = self.client.call("CreateSession", {}, [("graph_def", graph_def), ("config", config)])
                self.handle = str(reply.header["session"])
            else:
                self.client.call("ExtendSession", {"session": self.handle}, [("graph_def", graph_def)])
            self.sent_version = version

    def run(self, feed_names: Sequence[str], feeds: Sequence[Any], fetch_names: Sequence[str],
            target_names: Sequence[str], timeout: Optional[float], run_metadata: Any = None,
            options: Any = None) -> list[Any]:
        self._sync_graph()
        header = {"session": self.handle, "feeds": feed_names, "fetches": fetch_names, "targets": target_names,
                  "timeout": timeout}
        if run_metadata is not None:  # RunOptions asked for step stats or partition graphs
            header["partition_graphs"] = bool(options.output_partition_graphs)
            header["trace"] = tracing(options)
        reply = self.client.call("RunStep", header, list(zip(feed_names, feeds)),
                                 timeout=None if timeout is None else timeout + 5.0)
        values = []
        for i in range(len(fetch_names)):
            value = reply.tensors.get(str(i))
            values.append(value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value)
        if run_metadata is not None:
            stats = reply.tensors.get("step_stats")
            if isinstance(stats, np.ndarray):
                run_metadata.step_stats.MergeFromString(stats.tobytes())
            for name in sorted(n for n in reply.tensors if n.startswith("partition_graph:")):
                run_metadata.partition_graphs.add().ParseFromString(reply.tensors[name].tobytes())
        return values

    def list_devices(self) -> list[Any]:
        reply = self.client.call("ListDevices", {})
        return [_session._DeviceAttributes(_Described(*d)) for d in reply.header["devices"]]

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            try:
                self.client.call("CloseSession", {"session": handle}, timeout=5.0)
            except errors.OpError:
                pass  # the master is gone: so is the session


    def release(self) -> None:
        """Close from a garbage-collected session: on a thread of its own, never blocking the
        collector on a master that may be slow or gone."""
        if self.handle is not None:
            threading.Thread(target=self.close, name="tw-session-release", daemon=True).start()


class _Described:
    """A device described by a master (what _DeviceAttributes reads)."""

    def __init__(self, name: str, device_type: str, incarnation: int, memory_limit: int) -> None:
        self.name = name
        self.device_type = device_type
        self.incarnation = incarnation
        self.memory_limit = memory_limit


def reset(target: str, containers: Optional[Sequence[str]], config: Any) -> None:
    """`tf.Session.reset(target, containers)`: clears the containers on every task of the
    cluster and closes the master's sessions."""
    client = _master_client(target)
    client.call("Reset", {"containers": list(containers) if containers is not None else None})


_session.register_session_factory(PREFIX, GrpcSessionBackend, reset)
