"""Security of the distributed runtime (issue 13), beyond TensorFlow's servers, which accept any
connection on every interface: the cluster token is checked on every call (refusals are
UnauthenticatedError and are logged with the peer's address), TLS with a CA the test makes,
and a server binds only its own address. Real server processes on 127.0.0.1, stopped by pid."""
import fcntl
import logging
import os
import shutil
import socket
import struct
import subprocess
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import rpc, security
from tests.distributed import service_fuzz
from tests.distributed.task_process import TaskProcess, free_port

TOKEN = "s3cret-cluster-token"
SINGLE = {"worker": ["127.0.0.1:0"]}
CALL_LIMIT_S = 30.0


def bounded(fn, seconds=CALL_LIMIT_S):
    """fn() on a thread: its result or its exception, and a failure instead of a hang."""
    result = {}

    def run():
        try:
            result["value"] = fn()
        except BaseException as err:  # noqa: BLE001  (re-raised on the test's thread)
            result["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call did not end within {seconds} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def step(target):
    """A session step on `target`: a variable initialized there, read with a fed value."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        y = x * 2.0 + v
        with tf.Session(target) as sess:
            sess.run(v.initializer)
            return sess.run(y, {x: [1.0, 10.0, 100.0]})


EXPECTED = np.array([3.0, 22.0, 203.0], np.float32)


@pytest.fixture
def client_env(monkeypatch):
    """This process's (the client's) security settings, none to start with."""
    for name in (security.TOKEN_ENV, security.CERT_ENV, security.KEY_ENV, security.CA_ENV,
                 security.SERVER_NAME_ENV):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# ---------------------------------------------------------------------------------------------
# The cluster token
# ---------------------------------------------------------------------------------------------
def test_cluster_token_is_checked_on_every_call(tmp_path, client_env):
    task = TaskProcess(SINGLE, "worker", 0, str(tmp_path / "task.err"), env={security.TOKEN_ENV: TOKEN})
    try:
        client_env.setenv(security.TOKEN_ENV, TOKEN)
        np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)

        client_env.delenv(security.TOKEN_ENV)
        with pytest.raises(tf.errors.UnauthenticatedError, match="cluster token"):
            bounded(lambda: step(task.target))
        client_env.setenv(security.TOKEN_ENV, TOKEN + "x")
        with pytest.raises(tf.errors.UnauthenticatedError):
            bounded(lambda: step(task.target))
        # Every method, unary and streamed (messages above 4 MiB), worker and master alike.
        client = rpc.TaskClient("/job:worker/replica:0/task:0", task.address)
        big = np.zeros(5 << 20, np.uint8)
        try:
            for method in service_fuzz.service_methods():
                with pytest.raises(tf.errors.UnauthenticatedError, match=f"{method} to task"):
                    bounded(lambda: client.call(method, {}, timeout=10))
                with pytest.raises(tf.errors.UnauthenticatedError):
                    bounded(lambda: client.call(method, {}, [("big", big)], timeout=10))
        finally:
            client.close()

        # The refusals are logged with the peer's address; the right token still works after them.
        log = task.stderr()
        assert "Refused a call without a valid cluster token from ipv4:127.0.0.1:" in log, log[-2000:]
        client_env.setenv(security.TOKEN_ENV, TOKEN)
        np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)
        assert task.alive()
    finally:
        task.stop()


class _Context:
    def __init__(self, metadata, peer="ipv4:10.1.2.3:4567"):
        self._metadata, self._peer = metadata, peer

    def invocation_metadata(self):
        return self._metadata

    def peer(self):
        return self._peer


def test_token_check_and_its_rate_limited_log(caplog):
    check = security.TokenCheck(TOKEN)
    assert check.enabled and not security.TokenCheck(None).enabled
    assert security.TokenCheck(None).allowed(_Context(()))
    assert check.allowed(_Context(((security.TOKEN_METADATA, TOKEN),)))
    assert check.allowed(_Context((("other", "x"), (security.TOKEN_METADATA, "bad"), (security.TOKEN_METADATA, TOKEN))))
    with caplog.at_level(logging.WARNING, logger="tensorweave.distributed"):
        for port in range(1000, 1050):  # a flood from one host: one line, the rest counted
            assert not check.allowed(_Context(((security.TOKEN_METADATA, TOKEN[:-1]),), f"ipv4:10.1.2.3:{port}"))
        assert not check.allowed(_Context(None, "ipv6:[::1]:80"))
        assert not check.allowed(_Context(((security.TOKEN_METADATA.upper(), TOKEN),), "ipv4:10.9.9.9:1"))
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["Refused a call without a valid cluster token from ipv4:10.1.2.3:1000",
                     "Refused a call without a valid cluster token from ipv6:[::1]:80",
                     "Refused a call without a valid cluster token from ipv4:10.9.9.9:1"]
    check._logged["ipv4:10.1.2.3"] = (check._logged["ipv4:10.1.2.3"][0] - security.LOG_EVERY_S, 49)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tensorweave.distributed"):
        assert not check.allowed(_Context((), "ipv4:10.1.2.3:2000"))
    assert [r.getMessage() for r in caplog.records] == [
        "Refused a call without a valid cluster token from ipv4:10.1.2.3:2000 "
        "(49 more refused from ipv4:10.1.2.3 since the last report)"]


# ---------------------------------------------------------------------------------------------
# TLS
# ---------------------------------------------------------------------------------------------
def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(directory, name):
    """A CA (name.pem, name.key) and a server certificate it signs for IP 127.0.0.1 and
    localhost (name-server.pem, name-server.key); returns their paths."""
    if shutil.which("openssl") is None:
        pytest.fail("the TLS tests make their certificates with the openssl command, which is not installed")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *ec, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", f"/CN=tensorweave test CA {name}", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign", cwd=directory)
    _openssl("req", "-new", *ec, "-keyout", f"{name}-server.key", "-out", f"{name}-server.csr",
             "-subj", "/CN=tensorweave task", cwd=directory)
    (directory / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", f"{name}-server.csr", "-CA", f"{name}.pem", "-CAkey", f"{name}.key",
             "-CAcreateserial", "-out", f"{name}-server.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=directory)
    return {"ca": str(directory / f"{name}.pem"), "cert": str(directory / f"{name}-server.pem"),
            "key": str(directory / f"{name}-server.key")}


def test_tls_server_and_clients(tmp_path, client_env):
    certs = make_ca(tmp_path, "ca")
    other = make_ca(tmp_path, "other")
    env = {security.CERT_ENV: certs["cert"], security.KEY_ENV: certs["key"], security.TOKEN_ENV: TOKEN}
    task = TaskProcess(SINGLE, "worker", 0, str(tmp_path / "task.err"), env=env)
    try:
        client_env.setenv(security.TOKEN_ENV, TOKEN)
        client_env.setenv(security.CA_ENV, certs["ca"])
        np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)

        # Without the CA the client speaks plaintext to a TLS port; with another CA the server's
        # certificate does not verify: both are UnavailableError, promptly.
        client_env.delenv(security.CA_ENV)
        with pytest.raises(tf.errors.UnavailableError):
            bounded(lambda: step(task.target))
        client_env.setenv(security.CA_ENV, other["ca"])
        with pytest.raises(tf.errors.UnavailableError):
            bounded(lambda: step(task.target))
        # The certificate names 127.0.0.1, not the name a client is told to expect instead.
        client_env.setenv(security.CA_ENV, certs["ca"])
        client_env.setenv(security.SERVER_NAME_ENV, "somebody.else.example")
        with pytest.raises(tf.errors.UnavailableError):
            bounded(lambda: step(task.target))
        client_env.setenv(security.SERVER_NAME_ENV, "localhost")
        np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)
        assert task.alive()
    finally:
        task.stop()


def test_tls_between_tasks(tmp_path, client_env):
    """A PS process and a worker server in this process, both TLS with the token: the master's
    calls and the tensors pushed between the tasks all go over TLS."""
    certs = make_ca(tmp_path, "ca")
    env = {security.CERT_ENV: certs["cert"], security.KEY_ENV: certs["key"], security.CA_ENV: certs["ca"],
           security.TOKEN_ENV: TOKEN}
    cluster = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    ps = TaskProcess(cluster, "ps", 0, str(tmp_path / "ps.err"), env=env)
    server = None
    try:
        for name, value in env.items():
            client_env.setenv(name, value)
        server = tf.train.Server(cluster, job_name="worker", task_index=0)

        def train():
            with tf.Graph().as_default():
                with tf.device("/job:ps/task:0"):
                    w = tf.Variable(np.arange(4, dtype=np.float32), name="w")
                with tf.device("/job:worker/task:0"):
                    x = tf.placeholder(tf.float32, [4])
                    doubled = x * 2.0  # computed on the worker, pushed to the PS
                update = tf.assign_add(w, doubled)
                with tf.Session(server.target) as sess:
                    sess.run(w.initializer)
                    sess.run(update, {x: np.ones(4, np.float32)})
                    return sess.run(w)

        np.testing.assert_array_equal(bounded(train), np.arange(4, dtype=np.float32) + 2.0)
        assert ps.alive()
    finally:
        if server is not None:
            server.stop()
        ps.stop()


def test_tls_needs_both_certificate_and_key(client_env, tmp_path):
    client_env.setenv(security.CERT_ENV, str(tmp_path / "cert.pem"))
    with pytest.raises(ValueError, match=security.KEY_ENV):
        security.server_credentials()


# ---------------------------------------------------------------------------------------------
# Binding
# ---------------------------------------------------------------------------------------------
def _interface_addresses():
    """The IPv4 addresses of this machine's interfaces (SIOCGIFADDR on each)."""
    found = []
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue  # no IPv4 address
            found.append(socket.inet_ntoa(packed[20:24]))
    return found


def _listening(port):
    """The local addresses listening on `port` (from /proc/net/tcp and tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, hex_port = fields[1].split(":")
                if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    raw = bytes.fromhex(address)
                    # The kernel prints each 32-bit word of the address as a host-order (little-endian) int.
                    packed = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                    if len(packed) == 16 and packed[:12] == b"\0" * 10 + b"\xff\xff":  # IPv4-mapped IPv6
                        packed = packed[12:]
                    found.append(socket.inet_ntop(socket.AF_INET if len(packed) == 4 else socket.AF_INET6, packed))
    return found


def test_server_binds_only_its_own_address(tmp_path, client_env):
    port = free_port()
    task = TaskProcess({"worker": [f"127.0.0.1:{port}"]}, "worker", 0, str(tmp_path / "task.err"))
    try:
        assert task.address == f"127.0.0.1:{port}"
        assert _listening(port) == ["127.0.0.1"]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        others = [a for a in _interface_addresses() if not a.startswith("127.")]
        for address in others:
            with pytest.raises(OSError):
                with socket.create_connection((address, port), timeout=5):
                    pass
        np.testing.assert_array_equal(bounded(lambda: step(task.target)), EXPECTED)
    finally:
        task.stop()


def test_in_process_server_binds_only_its_own_address():
    server = tf.train.Server.create_local_server()
    try:
        port = int(server.target.rpartition(":")[2])
        # "localhost" resolves to the loopback addresses only.
        assert set(_listening(port)) <= {"127.0.0.1", "::1"} and _listening(port)
    finally:
        server.stop()
