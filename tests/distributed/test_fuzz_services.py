"""Fuzzed messages to every service method of a real server process (issue 13, "How it is
checked"): random bytes, random headers, huge declared sizes, unknown handles and steps,
PushTensor for devices not on the task, RunGraph/RunStep with wrong feeds, damaged GraphDefs
(tests/distributed/service_fuzz.py). Every call gets a TF error reply or a clean gRPC status;
afterwards the task still serves a normal session step correctly. Plus the defects the fuzzing
found, each pinned by a direct test."""
import time

import grpc
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import rpc, security, wire
from tensorweave.distributed import worker as worker_module
from tensorweave.distributed.cluster_spec import ClusterSpec
from tests.distributed import service_fuzz
from tests.distributed.task_process import TaskProcess
from tests.distributed.test_security import EXPECTED, TOKEN, bounded, step

SEED = 13
CASES = 600
TIME_LIMIT_S = 20.0
WORKER_METHODS = {"GetStatus", "RegisterGraph", "DeregisterGraph", "RunGraph", "PushTensor", "AbortStep",
                  "CleanupContainers"}
MASTER_METHODS = {"CreateSession", "ExtendSession", "RunStep", "CloseSession", "Reset", "ListDevices"}


@pytest.fixture(scope="module")
def methods():
    return service_fuzz.service_methods()


@pytest.fixture
def task(tmp_path, monkeypatch):
    """A server process with a cluster token; this process (the client) has it too."""
    for name in (security.CERT_ENV, security.KEY_ENV, security.CA_ENV, security.SERVER_NAME_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(security.TOKEN_ENV, TOKEN)
    process = TaskProcess({"worker": ["127.0.0.1:0"]}, "worker", 0, str(tmp_path / "task.err"),
                          env={security.TOKEN_ENV: TOKEN})
    try:
        yield process
    finally:
        process.stop()


def test_every_method_is_fuzzed(methods):
    assert set(methods) == WORKER_METHODS | MASTER_METHODS


def test_fuzzed_messages_leave_the_server_serving(task, methods):
    np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)
    start = time.monotonic()
    figures = service_fuzz.run(task.address, SEED, CASES, methods)
    assert time.monotonic() - start < TIME_LIMIT_S
    assert not figures["failures"], "\n".join(figures["failures"])
    counts = figures["counts"]
    assert sum(counts.values()) == CASES
    assert not [k for k in counts if service_fuzz.is_failure(k)]
    # Every method got fuzzed, unary and streamed; the cases reach past the decoding into the
    # services (not only InvalidArgumentError from the wire format).
    assert set(figures["called"]) >= set(methods) | {m + "Stream" for m in methods}
    assert counts["error:InvalidArgumentError"] > CASES // 4
    assert counts.get("error:AbortedError", 0) > 10  # unknown handles, sessions and aborted steps
    assert counts.get("ok", 0) > 10 and counts.get("status:UNIMPLEMENTED", 0) > 0

    assert task.alive()
    np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)
    log = task.stderr()
    assert "Traceback" not in log and "Internal error" not in log, log[-3000:]


# ---------------------------------------------------------------------------------------------
# The defects the fuzzing found (each fixed in tensorweave/distributed/)
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def local_task():
    server = tf.train.Server.create_local_server()
    client = rpc.TaskClient("local", server.target[len("grpc://"):])
    try:
        yield server, client
    finally:
        client.close()
        server.stop()


def test_a_step_with_nothing_to_run_ends(local_task):
    """sess.run([]) on a grpc:// session (and a RunStep naming nothing) used to wait forever."""
    server, client = local_task
    with tf.Session(server.target) as sess:
        assert bounded(lambda: sess.run([]), 10) == []
    session = client.call("CreateSession", {}, [("graph_def", np.frombuffer(
        tf.Graph().as_graph_def().SerializeToString(), np.uint8))]).header["session"]
    reply = bounded(lambda: client.call("RunStep", {"session": session, "feeds": [], "fetches": [], "targets": []},
                                        timeout=10), 15)
    assert reply.tensors == {}


def test_push_tensor_to_a_device_that_is_no_string(local_task):
    _, client = local_task
    for dst in (["a"], {"a": 1}, 5, None, "/job:ps/replica:0/task:0/device:CPU:0"):
        header = {"step": 1, "key": ["src", 1, dst, "t", "", 0]}
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not on task"):
            client.call("PushTensor", header, [("value", np.float32(1))], timeout=10)


def _register_seed_graph(client):
    graph_bytes, _ = service_fuzz.seed_graph()
    incarnations = {d[0]: d[2] for d in client.call("GetStatus", {}, timeout=10).header["devices"]}
    return client.call("RegisterGraph", {"incarnations": incarnations},
                       [("graph_def", np.frombuffer(graph_bytes, np.uint8))], timeout=10).header["handle"]


def test_run_graph_with_a_feed_that_does_not_convert(local_task):
    _, client = local_task
    handle = _register_seed_graph(client)
    header = {"handle": handle, "step": 77, "feeds": ["x:0"], "fetches": ["y:0"], "targets": []}
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not convert to float32"):
        client.call("RunGraph", header, [("x:0", np.array([b"a", b"b", b"c"], object))], timeout=10)
    header["step"] = 78
    with pytest.raises(tf.errors.InvalidArgumentError, match="no value for feed"):
        client.call("RunGraph", header, [], timeout=10)
    # The same graph still runs with a right feed (after its variable is initialized).
    client.call("RunGraph", {"handle": handle, "step": 79, "feeds": [], "fetches": [], "targets": ["init"]},
                timeout=10)
    header["step"] = 80
    reply = client.call("RunGraph", header, [("x:0", np.ones(3, np.float32))], timeout=10)
    np.testing.assert_array_equal(reply.tensors["y:0"], [3.0, 4.0, 5.0])


def test_abort_step_with_a_malformed_error(local_task):
    """An AbortStep whose error entry is malformed is refused; a well-formed one aborts the step
    with the master's error class."""
    _, client = local_task
    handle = _register_seed_graph(client)
    for error in ([0, "OK is no error"], [99, "x"], "text", [3]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad error entry"):
            client.call("AbortStep", {"step": 5, "error": error}, timeout=10)
    client.call("AbortStep", {"step": 6, "error": [tf.errors.UNAVAILABLE, "task /job:ps/task:0 died"]}, timeout=10)
    header = {"handle": handle, "step": 6, "feeds": ["x:0"], "fetches": ["y:0"], "targets": []}
    with pytest.raises(tf.errors.UnavailableError, match="died"):
        client.call("RunGraph", header, [("x:0", np.ones(3, np.float32))], timeout=10)


# ---------------------------------------------------------------------------------------------
# Limits on what one caller can make a task hold
# ---------------------------------------------------------------------------------------------
def test_oversized_single_messages_are_refused_before_they_are_buffered(local_task):
    """Senders stream anything above 4 MiB in pieces of at most wire.MAX_PIECE bytes, so the
    server refuses a bigger single gRPC message (even one without the token) with
    RESOURCE_EXHAUSTED; a big tensor streamed in pieces still arrives."""
    server, client = local_task
    address = server.target[len("grpc://"):]
    channel = grpc.insecure_channel(address, options=list(rpc._UNLIMITED))
    try:
        oversized = b"\0" * (wire.MAX_PIECE + 1)
        unary = channel.unary_unary(f"/{rpc.SERVICE}/GetStatus", request_serializer=None,
                                    response_deserializer=None)
        with pytest.raises(grpc.RpcError) as info:
            unary(oversized, timeout=30)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        streamed = channel.stream_unary(f"/{rpc.SERVICE}/GetStatusStream", request_serializer=None,
                                        response_deserializer=None)
        with pytest.raises(grpc.RpcError) as info:
            streamed(iter([oversized]), timeout=30)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        channel.close()
    error = rpc.transport_error(info.value, "/job:x/task:0", "GetStatus")
    assert isinstance(error, tf.errors.ResourceExhaustedError) and "GetStatus to task /job:x/task:0" in error.message
    # 24 MB in one tensor: streamed in 1 MiB pieces, accepted (stored for a step not yet run).
    device = client.call("GetStatus", {}, timeout=10).header["devices"][0][0]
    big = np.arange(6 << 20, dtype=np.float32)
    reply = client.call("PushTensor", {"step": 12345, "key": [device, 1, device, "edge_9_big", "", 0]},
                        [("value", big)], timeout=60)
    assert reply.header == {"tensors": []}


def test_values_for_steps_that_never_run_are_bounded(monkeypatch):
    """Values pushed (or aborts sent) for steps whose RunGraph never comes are kept for at most
    _MAX_WAITING_STEPS steps, the oldest dropped; a dropped step is refused later."""
    monkeypatch.setattr(worker_module, "_MAX_WAITING_STEPS", 50)
    worker = worker_module.Worker("w", 0, ClusterSpec({"w": ["127.0.0.1:1"]}))
    try:
        device = worker.devices.devices[0].name

        def push(step_id):
            header = {"step": step_id, "key": [device, 1, device, "edge_1_x", "", 0]}
            return worker.push_tensor(wire.Message(header, {"value": np.ones(1000, np.float32)}))[0]

        for step_id in range(1, 201):
            assert push(step_id) == {}
            if step_id % 3 == 0:
                worker.abort_step(wire.Message({"step": step_id + 1000}, {}))
        assert len(worker._steps) <= 50
        assert 200 in worker._steps  # the newest are kept
        # an abort for a step not running here keeps nothing, only the note that it ended
        assert 1198 not in worker._steps and 1198 in worker._ended
        assert push(1) == {"dropped": True}  # the oldest was dropped: its values are not kept again
    finally:
        worker.shutdown()
