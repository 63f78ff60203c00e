"""gRPC plumbing shared by the master and worker services: one generic service per task whose
methods take and return wire messages (wire.py), and the client side that calls them.

Every method `M` is served twice: `/tensorweave.Task/M` takes one message (unary), and
`/tensorweave.Task/MStream` takes a message streamed in chunks; a client streams messages
larger than wire.STREAM_THRESHOLD. Replies are single messages with no size limit. A handler's
OpError goes back in the reply header (code and message), so the caller raises the same TF
error; a transport failure (the task is down, stopped answering, refused us) becomes
UnavailableError, DeadlineExceededError or UnauthenticatedError naming the task.
"""
from __future__ import annotations

import logging
import queue
import threading
from concurrent import futures
from typing import Any, Callable, Iterable, Optional, Sequence

import grpc

from tensorweave.distributed import security, wire
from tensorweave.framework import errors

SERVICE = "tensorweave.Task"
_UNLIMITED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
# A task that went away is tried again at least every second (gRPC's default backoff grows to
# two minutes), so a restarted task is reached as soon as it serves: recovery waits on it.
_RECONNECT = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.min_reconnect_backoff_ms", 100),
              ("grpc.max_reconnect_backoff_ms", 1000)]
_log = logging.getLogger("tensorweave.distributed")

_MAX_CALLERS = 16  # threads per client making asynchronous calls

# handler(message) -> (reply header, reply tensors)
Handler = Callable[[wire.Message], tuple[dict, Sequence[tuple[str, Any]]]]


class WithCall:
    """A handler that is also given its gRPC call context (None when called in process), to
    learn when the call ends early: the caller's process died or it cancelled."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[wire.Message, Any], tuple[dict, Sequence[tuple[str, Any]]]]) -> None:
        self.fn = fn

    def __call__(self, message: wire.Message) -> tuple[dict, Sequence[tuple[str, Any]]]:
        return self.fn(message, None)


def _identity(data: Any) -> Any:
    return data


def _reply(handler: Handler, message_of: Callable[[], wire.Message]) -> bytes:
    try:
        header, tensors = handler(message_of())
        return wire.join(wire.encode(header, tensors))
    except errors.OpError as err:
        return wire.join(wire.encode(wire.error_header(err)))
    except Exception as err:  # noqa: BLE001  (a bug or hostile input must not kill the server)
        _log.exception("Internal error in a service method")
        return wire.join(wire.encode(wire.error_header(err)))


def make_server(address: str, handlers: dict[str, Handler], max_workers: int = 64) -> tuple[Any, int]:
    """A started-later gRPC server bound to `address` only (host:port; port 0 picks a free one),
    returns (server, bound port)."""
    check = security.TokenCheck(security.cluster_token())

    def bound(handler: Handler, context: Any) -> Handler:
        if isinstance(handler, WithCall):
            fn = handler.fn
            return lambda message: fn(message, context)
        return handler

    def unary(handler: Handler) -> Any:
        def call(request: bytes, context: Any) -> bytes:
            if not check.allowed(context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong cluster token")
            return _reply(bound(handler, context), lambda: wire.decode(request))
        return grpc.unary_unary_rpc_method_handler(call, _identity, _identity)

    def streamed(handler: Handler) -> Any:
        def call(pieces: Iterable[bytes], context: Any) -> bytes:
            if not check.allowed(context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong cluster token")
            return _reply(bound(handler, context), lambda: wire.decode_stream(pieces))
        return grpc.stream_unary_rpc_method_handler(call, _identity, _identity)

    methods = {}
    for name, handler in handlers.items():
        methods[name] = unary(handler)
        methods[name + "Stream"] = streamed(handler)
    # A client sends nothing larger than wire.MAX_PIECE in one gRPC message (larger messages are
    # streamed), so a bigger one is refused (RESOURCE_EXHAUSTED) before gRPC buffers it whole,
    # even from a peer without the cluster token, whose call is refused only after it arrived.
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", wire.MAX_PIECE)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers, thread_name_prefix="tw-rpc"),
                         options=options,
                         handlers=[grpc.method_handlers_generic_handler(SERVICE, methods)])
    credentials = security.server_credentials()
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        raise errors.UnavailableError(None, None, f"Could not bind the server address {address}")
    return server, port


# gRPC statuses that keep their meaning as TF errors (TF's codes are gRPC's); any other status
# is a transport failure: UnavailableError, which training loops recover from.
_STATUS_ERRORS = {grpc.StatusCode.DEADLINE_EXCEEDED: errors.DeadlineExceededError,
                  grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
                  grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
                  grpc.StatusCode.CANCELLED: errors.CancelledError,
                  grpc.StatusCode.RESOURCE_EXHAUSTED: errors.ResourceExhaustedError,
                  grpc.StatusCode.UNIMPLEMENTED: errors.UnimplementedError}


def transport_error(err: grpc.RpcError, task: str, method: str) -> errors.OpError:
    code = err.code() if hasattr(err, "code") else None
    details = err.details() if hasattr(err, "details") else str(err)
    text = f"{method} to task {task} failed: {details}"
    return _STATUS_ERRORS.get(code, errors.UnavailableError)(None, None, text)


class TaskClient:
    """Calls to one task's services (a channel per task, shared by everyone in this process)."""

    def __init__(self, task: str, address: str) -> None:
        self.task = task
        self.address = address
        credentials = security.channel_credentials()
        options = _UNLIMITED + _RECONNECT + security.channel_options()
        if credentials is None:
            self.channel = grpc.insecure_channel(address, options=options)
        else:
            self.channel = grpc.secure_channel(address, credentials, options=options)
        self._unary: dict[str, Any] = {}
        self._stream: dict[str, Any] = {}
        self._metadata = security.call_metadata()
        self._pending: queue.SimpleQueue = queue.SimpleQueue()
        self._callers: list[threading.Thread] = []
        self._callers_lock = threading.Lock()
        self._idle = 0
        self._abandoned = 0  # threads still blocked in cancelled calls

    def _methods(self, method: str) -> tuple[Any, Any]:
        unary = self._unary.get(method)
        if unary is None:
            unary = self._unary[method] = self.channel.unary_unary(
                f"/{SERVICE}/{method}", request_serializer=_identity, response_deserializer=_identity)
            self._stream[method] = self.channel.stream_unary(
                f"/{SERVICE}/{method}Stream", request_serializer=_identity, response_deserializer=_identity)
        return unary, self._stream[method]

    def call(self, method: str, header: dict, tensors: Sequence[tuple[str, Any]] = (),
             timeout: Optional[float] = None, wait_for_ready: bool = False) -> wire.Message:
        """A blocking call; raises the reply's TF error or the transport's."""
        return self._send(method, wire.encode(header, tensors), timeout, wait_for_ready)

    def _send(self, method: str, parts: list[Any], timeout: Optional[float], wait_for_ready: bool) -> wire.Message:
        unary, stream = self._methods(method)
        try:
            if wire.size(parts) > wire.STREAM_THRESHOLD:
                data = stream(wire.chunks(parts), timeout=timeout, metadata=self._metadata,
                              wait_for_ready=wait_for_ready)
            else:
                data = unary(wire.join(parts), timeout=timeout, metadata=self._metadata,
                             wait_for_ready=wait_for_ready)
        except grpc.RpcError as err:
            raise transport_error(err, self.task, method) from None
        reply = wire.decode(data)
        wire.raise_if_error(reply.header)
        return reply

    def call_async(self, method: str, header: dict, tensors: Sequence[tuple[str, Any]],
                   done: Callable[[Optional[BaseException], Optional[wire.Message]], None],
                   timeout: Optional[float] = None) -> "PendingCall":
        """Starts a call; `done(error, reply)` runs once, on one of this client's caller threads
        when the call ends, or at once with CancelledError when it is cancelled. (gRPC's own
        futures start a thread per call, which costs more than the call.)"""
        parts = wire.encode(header, tensors)
        call = PendingCall(self, method, done)
        with self._callers_lock:
            if self._idle == 0 and len(self._callers) - self._abandoned < _MAX_CALLERS:
                thread = threading.Thread(target=self._caller, name=f"tw-call-{self.task}", daemon=True)
                self._callers.append(thread)
                self._idle += 1
                thread.start()
        self._pending.put((call, parts, timeout))
        return call

    def _caller(self) -> None:
        while True:
            item = self._pending.get()
            if item is None:
                return
            call, parts, timeout = item
            with self._callers_lock:
                self._idle -= 1
                call.started = True
            if not call.delivered:  # (cancelled while queued: nothing to send)
                try:
                    reply = self._send(call.method, parts, timeout, False)
                    error: Optional[BaseException] = None
                except errors.OpError as err:
                    reply, error = None, err
                except ValueError as err:  # gRPC: "Cannot invoke RPC on closed channel!"
                    reply, error = None, errors.CancelledError(None, None, f"{call.method} to task {self.task}: {err}")
                except Exception as err:  # noqa: BLE001  (reported to the caller, never lost)
                    reply, error = None, errors.InternalError(None, None, f"{call.method} to task {self.task}: {err}")
                call.deliver(error, reply)
            with self._callers_lock:
                self._idle += 1
                if call.abandoned:
                    self._abandoned -= 1

    def _abandon(self, call: "PendingCall") -> None:
        """A cancelled call's thread may stay blocked (a task that stopped answering): it no
        longer counts against the thread limit, so later calls get threads of their own."""
        with self._callers_lock:
            if call.started and not call.abandoned:
                call.abandoned = True
                self._abandoned += 1

    def close(self) -> None:
        with self._callers_lock:
            callers, self._callers = self._callers, []
        while True:  # calls still queued end now
            try:
                item = self._pending.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].deliver(errors.CancelledError(None, None, f"the client of task {self.task} was closed"), None)
        for _ in callers:
            self._pending.put(None)
        self.channel.close()


class PendingCall:
    """A call started by `TaskClient.call_async`."""

    __slots__ = ("client", "method", "_done", "_lock", "delivered", "started", "abandoned")

    def __init__(self, client: TaskClient, method: str,
                 done: Callable[[Optional[BaseException], Optional[wire.Message]], None]) -> None:
        self.client = client
        self.method = method
        self._done = done
        self._lock = threading.Lock()
        self.delivered = False
        self.started = False
        self.abandoned = False

    def deliver(self, error: Optional[BaseException], reply: Optional[wire.Message]) -> None:
        with self._lock:
            if self.delivered:
                return
            self.delivered = True
        try:
            self._done(error, reply)
        except Exception:  # noqa: BLE001
            _log.exception("Error in the completion of %s", self.method)

    def cancel(self) -> None:
        """Ends the call for its caller now (CancelledError), whatever the task does."""
        if self.delivered:
            return
        self.client._abandon(self)
        self.deliver(errors.CancelledError(None, None, f"{self.method} to task {self.client.task} was cancelled"),
                     None)


class LocalClient:
    """The same calls to a service in this process, without gRPC (TF's LocalMaster shortcut):
    a client and the master it talks to, or a master and its own task's worker."""

    def __init__(self, handlers: dict[str, Handler]) -> None:
        self._handlers = handlers

    def call(self, method: str, header: dict, tensors: Sequence[tuple[str, Any]] = (),
             timeout: Optional[float] = None, wait_for_ready: bool = False) -> wire.Message:
        reply_header, reply_tensors = self._handlers[method](wire.Message(header, dict(tensors)))
        return wire.Message(reply_header, dict(reply_tensors))

    def close(self) -> None:
        pass
