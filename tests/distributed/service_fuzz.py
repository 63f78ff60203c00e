"""Seeded fuzzing of a task's services (issue 13): hostile and malformed calls to every method of
a real server, unary and streamed, over a raw gRPC channel (so any bytes can be sent).

Case kinds: random bytes; valid-looking messages with random headers and tensors; huge declared
sizes; unknown session and graph handles; unknown step ids; PushTensor for devices that are not
on the task; RunGraph and RunStep with wrong feeds (wrong dtype, shape, missing, dead, unknown
names) on a graph the fuzzer registered itself; damaged GraphDefs for CreateSession,
ExtendSession and RegisterGraph.

Outcomes: "error:<Class>" (a TF error in the reply), "ok" (a well-formed reply: e.g. an
AbortStep for an unknown step, which records it), "status:<CODE>" (a clean gRPC status, e.g.
UNIMPLEMENTED for a name that is not a method). Failures: an INTERNAL error reply (a handler
broke on the input: a defect), gRPC UNKNOWN (an exception escaped the handler), UNAVAILABLE (the
task died or stopped answering), a reply that does not decode, and a call that outlives its
deadline (a hang).

Used by tests/distributed/test_fuzz_services.py and bench/fuzz_readers.py (--services).
"""
from __future__ import annotations

import json
import random
import struct
import time
from typing import Any, Callable

import grpc
import numpy as np

import tensorweave as tf
from tensorweave.distributed import rpc, security, wire
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.master import Master
from tensorweave.distributed.worker import Worker

CALL_TIMEOUT_S = 10.0
HUGE = [(1 << 64) - 1, 1 << 63, 1 << 62, 1 << 40, 1 << 31, (1 << 32) - 1, -1, -(1 << 63)]
_NAMES = ["x:0", "y:0", "v:0", "v", "y", "x", "init", "Placeholder:0", "", ":0", "nope:7", "a/b:1", "\u00e9"]


def service_methods() -> list[str]:
    """The names of every method a task serves (its worker's and its master's)."""
    worker = Worker("fuzz", 0, ClusterSpec({"fuzz": ["127.0.0.1:1"]}))
    try:
        return sorted({**worker.handlers(), **Master(worker.task, worker.cluster, worker).handlers()})
    finally:
        worker.shutdown()


def seed_graph() -> tuple[bytes, dict]:
    """The graph the fuzzer registers and runs: placeholder x [3] float32, y = x * 2 + v."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        tf.identity(x * 2.0 + v, name="y")
        s = tf.placeholder(tf.string, [None], name="s")
        tf.strings.length(s, name="n")
        tf.group(v.initializer, name="init")
    return graph.as_graph_def().SerializeToString(), {"x": "x:0", "y": "y:0", "init": "init"}


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice(HUGE + [0, 1, 7, rng.randrange(1 << 70)])
    if kind == 1:
        return rng.choice(_NAMES + ["".join(chr(rng.randrange(32, 0x3000)) for _ in range(rng.randrange(20)))])
    if kind == 2:
        return rng.choice([None, True, False])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e308, float("nan"), float("inf")])
    if kind == 4:
        return rng.choice(_NAMES)
    if kind == 5:
        return [rng.choice(_NAMES) for _ in range(rng.randrange(4))]
    if kind == 6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == 7:
        return {rng.choice(_NAMES): _json_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return [[rng.choice(_NAMES), rng.randrange(-2, 1 << 40)] for _ in range(rng.randrange(3))]


_KEYS = ["session", "handle", "handles", "step", "feeds", "fetches", "targets", "key", "dst_incarnation",
         "incarnations", "containers", "timeout", "error", "devices", "tensors", "graph"]


def _random_tensor(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    shape = tuple(rng.randrange(4) for _ in range(rng.randrange(3)))
    if kind == 0:
        return wire.DEAD
    if kind == 1:
        return np.array([bytes(rng.randrange(256) for _ in range(rng.randrange(8))) for _ in range(3)], dtype=object)
    if kind == 2:
        return np.frombuffer(bytes(rng.randrange(256) for _ in range(rng.randrange(64))), np.uint8)
    dtype = rng.choice([np.float32, np.float64, np.int32, np.int64, np.bool_, np.float16, np.complex64, np.uint8])
    return np.random.default_rng(rng.randrange(1 << 30)).standard_normal(shape).astype(dtype)


def _message(header: dict, payload: bytes = b"") -> bytes:
    text = json.dumps(header).encode("utf-8")
    return struct.pack("<4sI", b"TWM1", len(text)) + text + payload


def _mutate(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    if rng.random() < 0.2:
        return bytes(out[:rng.randrange(len(out))])
    for _ in range(rng.randint(1, 4)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


class ServiceFuzzer:
    """Cases against the task at `address`; `methods` from service_methods()."""

    def __init__(self, address: str, methods: list[str], seed: int) -> None:
        self.address = address
        self.methods = methods
        self.rng = random.Random(seed)
        credentials = security.channel_credentials()
        options = list(rpc._UNLIMITED) + security.channel_options()
        self.channel = (grpc.insecure_channel(address, options=options) if credentials is None
                        else grpc.secure_channel(address, credentials, options=options))
        self.metadata = security.call_metadata()
        self.graph_bytes, self.names = seed_graph()
        self.client = rpc.TaskClient("fuzzed task", address)
        status = self.client.call("GetStatus", {}, timeout=CALL_TIMEOUT_S).header
        self.task = status["task"]
        self.devices = [d[0] for d in status["devices"]]
        self.incarnations = {d[0]: d[2] for d in status["devices"]}
        self.handle = str(self.client.call(
            "RegisterGraph", {"incarnations": self.incarnations},
            [("graph_def", np.frombuffer(self.graph_bytes, np.uint8))], timeout=CALL_TIMEOUT_S).header["handle"])
        self.session = str(self.client.call(
            "CreateSession", {}, [("graph_def", np.frombuffer(self.graph_bytes, np.uint8))],
            timeout=CALL_TIMEOUT_S).header["session"])
        self.step_ids = iter(range(1 << 50, 1 << 51))
        self.kinds: list[Callable[[], tuple[str, list[bytes], bool]]] = [
            self.random_bytes, self.random_header, self.huge_sizes, self.unknown_handles, self.unknown_steps,
            self.foreign_devices, self.wrong_feeds, self.damaged_graphs]

    def close(self) -> None:
        self.client.close()
        self.channel.close()

    # -- sending --------------------------------------------------------------------------------------
    def _send(self, method: str, pieces: list[bytes], streamed: bool) -> str:
        path = f"/{rpc.SERVICE}/{method}{'Stream' if streamed else ''}"
        try:
            if streamed:
                call = self.channel.stream_unary(path, request_serializer=None, response_deserializer=None)
                data = call(iter(pieces), timeout=CALL_TIMEOUT_S, metadata=self.metadata)
            else:
                call = self.channel.unary_unary(path, request_serializer=None, response_deserializer=None)
                data = call(b"".join(pieces), timeout=CALL_TIMEOUT_S, metadata=self.metadata)
        except grpc.RpcError as err:
            return f"status:{err.code().name}"
        try:
            reply = wire.decode(data)
        except tf.errors.OpError:
            return "undecodable reply"
        try:
            wire.raise_if_error(reply.header)
        except tf.errors.OpError as err:
            return f"error:{type(err).__name__}" + (f" {err.message[:300]}" if isinstance(err, tf.errors.InternalError)
                                                    else "")
        return "ok"

    def case(self) -> tuple[str, str]:
        """One seeded case: (description, outcome)."""
        kind = self.rng.choice(self.kinds)
        method, pieces, streamed = kind()
        if streamed is None:
            streamed = self.rng.random() < 0.3
        if streamed and len(pieces) == 1 and len(pieces[0]) > 1 and self.rng.random() < 0.5:
            cut = self.rng.randrange(1, len(pieces[0]))
            pieces = [pieces[0][:cut], pieces[0][cut:]]
        return f"{kind.__name__} {method}{'Stream' if streamed else ''}", self._send(method, pieces, streamed)

    def normal(self, method: str, header: dict, tensors: list) -> list[bytes]:
        return [wire.join(wire.encode(header, tensors))]

    # -- case kinds -----------------------------------------------------------------------------------
    def random_bytes(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        if rng.random() < 0.5:
            data = b"TWM1" + struct.pack("<I", rng.choice([len(data), 0, 2, 1 << 31, rng.randrange(300)])) + data
        method = rng.choice(self.methods + ["NoSuchMethod"])
        return method, [data], None

    def random_header(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        header = {rng.choice(_KEYS): _json_value(rng) for _ in range(rng.randrange(6))}
        if rng.random() < 0.3:
            header["session"] = self.session
        if rng.random() < 0.3:
            header["handle"] = self.handle
        tensors = [(rng.choice(_NAMES + ["graph_def", "config", "value"]), _random_tensor(rng))
                   for _ in range(rng.randrange(3))]
        tensors = list(dict(tensors).items())
        method = rng.choice(self.methods)
        return method, self.normal(method, header, tensors), None

    def huge_sizes(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        n = rng.choice(HUGE[:6])
        entry = rng.choice([["value", "|u1", [n] if n < 1 << 48 else [1 << 47, 1 << 47], n, False],
                            ["value", "string", [1], n, False], ["graph_def", "<f8", [n // 8 % (1 << 48)], n, False]])
        header = {"step": 1, "session": self.session, "tensors": [entry]}
        method = rng.choice(self.methods)
        first = _message(header)
        if rng.random() < 0.5:  # streamed: a few real chunks after the huge declaration
            return method, [first] + [b"\0" * 65536] * rng.randrange(4), True
        return method, [first + b"\0" * rng.randrange(100)], False

    def unknown_handles(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        handle = rng.choice([f"{rng.getrandbits(63):x}/{rng.randrange(9)}", "", self.handle + "0", 5, None])
        session = rng.choice([f"{rng.getrandbits(40):x}-{rng.randrange(9)}", "", self.session + "9", 3, None])
        method, header = rng.choice([
            ("RunGraph", {"handle": handle, "step": next(self.step_ids), "feeds": [], "fetches": ["y:0"],
                          "targets": []}),
            ("DeregisterGraph", {"handles": [handle]}),
            ("RunStep", {"session": session, "feeds": [], "fetches": ["y:0"], "targets": []}),
            ("ExtendSession", {"session": session}),
            ("CloseSession", {"session": session}),
        ])
        tensors = [("graph_def", np.frombuffer(self.graph_bytes, np.uint8))] if method == "ExtendSession" else []
        return method, self.normal(method, header, tensors), None

    def unknown_steps(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        step = rng.choice([next(self.step_ids), -1, 0, rng.choice(HUGE), "7", None])
        device = rng.choice(self.devices)
        method, header, tensors = rng.choice([
            ("AbortStep", {"step": step}, []),
            ("AbortStep", {"step": step, "error": rng.choice([[3, "x"], [0, "ok"], "bad", [99, 1]])}, []),
            ("PushTensor", {"step": step, "key": [device, self.incarnations[device], device, "edge_1_x", "", 0]},
             [("value", np.float32(1))]),
            ("RunGraph", {"handle": self.handle, "step": step, "feeds": ["x:0"], "fetches": ["y:0"], "targets": [],
                          "timeout": 2.0}, [("x:0", np.ones(3, np.float32))]),
        ])
        return method, self.normal(method, header, tensors), None

    def foreign_devices(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        device = rng.choice(["/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:9/device:CPU:0",
                             "/device:GPU:0", "", "garbage", self.devices[0] + "x", 5, None, ["a"], {"a": 1}])
        src = rng.choice([self.devices[0], device, 7])
        key = [src, rng.choice([0, 1, -1, "x", None, 1 << 70]), device, rng.choice(["t", 5, None]),
               rng.choice(["", None]), rng.choice([0, -1, "a", None])]
        if rng.random() < 0.2:
            key = key[:rng.randrange(6)]
        header = {"step": next(self.step_ids), "key": key, "dst_incarnation": rng.choice([0, 1, "x", None])}
        return "PushTensor", self.normal("PushTensor", header, [("value", _random_tensor(self.rng))]), None

    def wrong_feeds(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        value = rng.choice([np.ones(4, np.float32), np.ones((3, 1), np.float32), np.array([b"a", b"b", b"c"], object),
                            np.array([b"1.5", b"2", b"x"], object), np.ones(3, np.complex64), wire.DEAD,
                            np.float32(2), np.ones(3, np.bool_), np.ones(3, np.int64), np.array(["1", "2", "3"]),
                            np.ones((0,), np.float32), np.ones(3, np.float16)])
        feeds = rng.choice([["x:0"], ["x:0", "x:0"], ["s:0"], ["nope:0"], ["y:0"], [], ["x:1"], ["x"]])
        fetches = rng.choice([["y:0"], ["n:0"], ["x:0"], [], ["y:0", "y:0"], ["init"], ["v"], ["zz:0"]])
        targets = rng.choice([[], ["init"], ["y"], ["nope"], ["y:0"]])
        names = list(feeds)
        tensors = [(name, value) for name in names]
        if rng.random() < 0.2:
            tensors = tensors[:-1]  # a declared feed without its value
        if rng.random() < 0.5:
            header = {"handle": self.handle, "step": next(self.step_ids), "feeds": feeds, "fetches": fetches,
                      "targets": targets, "timeout": rng.choice([None, 2.0, -1, 0.001])}
            return "RunGraph", self.normal("RunGraph", header, tensors), None
        header = {"session": self.session, "feeds": feeds, "fetches": fetches, "targets": targets,
                  "timeout": rng.choice([None, 2.0, -5, "x"])}
        return "RunStep", self.normal("RunStep", header, tensors), None

    def damaged_graphs(self) -> tuple[str, list[bytes], Any]:
        rng = self.rng
        damaged = np.frombuffer(_mutate(rng, self.graph_bytes), np.uint8)
        config = np.frombuffer(bytes(rng.randrange(256) for _ in range(rng.randrange(12))), np.uint8)
        method, header = rng.choice([("CreateSession", {}), ("RegisterGraph", {"incarnations": self.incarnations}),
                                     ("RegisterGraph", {"incarnations": {self.devices[0]: rng.choice(["x", 1, []])}}),
                                     ("ExtendSession", {"session": self.session})])
        tensors = [("graph_def", damaged)] + ([("config", config)] if rng.random() < 0.3 else [])
        return method, self.normal(method, header, tensors), None


# (UNAVAILABLE: the task stopped answering or died.)
FAILURES = ("error:InternalError", "status:UNKNOWN", "status:DEADLINE_EXCEEDED", "status:UNAVAILABLE",
            "undecodable reply")


def is_failure(outcome: str) -> bool:
    return outcome.startswith(FAILURES)


def run(address: str, seed: int, cases: int, methods: list[str]) -> dict:
    """`cases` seeded cases; the figures: outcome counts, the methods called (name, and name +
    "Stream"), failures (up to 20) and seconds."""
    fuzzer = ServiceFuzzer(address, methods, seed)
    start = time.perf_counter()
    counts: dict[str, int] = {}
    called: set[str] = set()
    failures = []
    try:
        for i in range(cases):
            what, outcome = fuzzer.case()
            called.add(what.split(" ")[1])
            key = outcome.split(" ", 1)[0]
            counts[key] = counts.get(key, 0) + 1
            if is_failure(outcome) and len(failures) < 20:
                failures.append(f"case {i} ({what}): {outcome}")
    finally:
        fuzzer.close()
    return {"counts": counts, "called": sorted(called), "failures": failures,
            "seconds": time.perf_counter() - start}
