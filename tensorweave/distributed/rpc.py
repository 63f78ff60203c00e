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
from concurrent import futures
from typing import Any, Callable, Iterable, Optional, Sequence

import grpc

from tensorweave.distributed import security, wire
from tensorweave.framework import errors

SERVICE = "tensorweave.Task"
_UNLIMITED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
_log = logging.getLogger("tensorweave.distributed")

# handler(message) -> (reply header, reply tensors)
Handler = Callable[[wire.Message], tuple[dict, Sequence[tuple[str, Any]]]]


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

    def unary(handler: Handler) -> Any:
        def call(request: bytes, context: Any) -> bytes:
            if not check.allowed(context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong cluster token")
            return _reply(handler, lambda: wire.decode(request))
        return grpc.unary_unary_rpc_method_handler(call, _identity, _identity)

    def streamed(handler: Handler) -> Any:
        def call(pieces: Iterable[bytes], context: Any) -> bytes:
            if not check.allowed(context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong cluster token")
            return _reply(handler, lambda: wire.decode_stream(pieces))
        return grpc.stream_unary_rpc_method_handler(call, _identity, _identity)

    methods = {}
    for name, handler in handlers.items():
        methods[name] = unary(handler)
        methods[name + "Stream"] = streamed(handler)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers, thread_name_prefix="tw-rpc"),
                         options=_UNLIMITED,
                         handlers=[grpc.method_handlers_generic_handler(SERVICE, methods)])
    credentials = security.server_credentials()
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        raise errors.UnavailableError(None, None, f"Could not bind the server address {address}")
    return server, port


def transport_error(err: grpc.RpcError, task: str, method: str) -> errors.OpError:
    code = err.code() if hasattr(err, "code") else None
    details = err.details() if hasattr(err, "details") else str(err)
    text = f"{method} to task {task} failed: {details}"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.DeadlineExceededError(None, None, text)
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return errors.UnauthenticatedError(None, None, text)
    if code == grpc.StatusCode.CANCELLED:
        return errors.CancelledError(None, None, text)
    return errors.UnavailableError(None, None, text)


class TaskClient:
    """Calls to one task's services (a channel per task, shared by everyone in this process)."""

    def __init__(self, task: str, address: str) -> None:
        self.task = task
        self.address = address
        credentials = security.channel_credentials()
        options = _UNLIMITED + security.channel_options()
        if credentials is None:
            self.channel = grpc.insecure_channel(address, options=options)
        else:
            self.channel = grpc.secure_channel(address, credentials, options=options)
        self._unary: dict[str, Any] = {}
        self._stream: dict[str, Any] = {}
        self._metadata = security.call_metadata()

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
        parts = wire.encode(header, tensors)
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
                   timeout: Optional[float] = None) -> Any:
        """Starts a call; `done(error, reply)` runs on a gRPC thread when it ends."""
        parts = wire.encode(header, tensors)
        unary, stream = self._methods(method)
        if wire.size(parts) > wire.STREAM_THRESHOLD:
            future = stream.future(wire.chunks(parts), timeout=timeout, metadata=self._metadata)
        else:
            future = unary.future(wire.join(parts), timeout=timeout, metadata=self._metadata)
        task = self.task

        def finished(f: Any) -> None:
            try:
                data = f.result()
            except grpc.RpcError as err:
                done(transport_error(err, task, method), None)
                return
            except BaseException as err:  # noqa: BLE001  (cancelled futures)
                done(errors.CancelledError(None, None, f"{method} to task {task} was cancelled: {err}"), None)
                return
            try:
                reply = wire.decode(data)
                wire.raise_if_error(reply.header)
            except errors.OpError as err:
                done(err, None)
                return
            done(None, reply)

        future.add_done_callback(finished)
        return future

    def close(self) -> None:
        self.channel.close()


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
