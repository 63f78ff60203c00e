"""Who may talk to a task (beyond TensorFlow, whose servers accept any connection).

- A server binds only the address its cluster spec gives it (server.py).
- A shared cluster token, from the environment variable TENSORWEAVE_CLUSTER_TOKEN, is sent by
  every client call (gRPC metadata) and checked by every service method; a call without it, or
  with another, is refused with UNAUTHENTICATED and logged with the peer's address (a flood of
  refusals from one host is logged once per LOG_EVERY_S seconds, with the count).
- Optional TLS: TENSORWEAVE_TLS_CERT and TENSORWEAVE_TLS_KEY (PEM files) make a server speak TLS;
  TENSORWEAVE_TLS_CA (a PEM file) makes clients verify servers against that CA (a task's client
  uses the CA when it is set, else the server certificate itself as the root). TLS names are
  checked against TENSORWEAVE_TLS_SERVER_NAME when set (certificates are often issued for a
  name, while tasks are addressed by IP).
"""
from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from typing import Any, Optional

import grpc

TOKEN_ENV = "TENSORWEAVE_CLUSTER_TOKEN"
CERT_ENV, KEY_ENV, CA_ENV = "TENSORWEAVE_TLS_CERT", "TENSORWEAVE_TLS_KEY", "TENSORWEAVE_TLS_CA"
SERVER_NAME_ENV = "TENSORWEAVE_TLS_SERVER_NAME"
TOKEN_METADATA = "tensorweave-cluster-token"
LOG_EVERY_S = 10.0
_MAX_LOGGED_HOSTS = 4096

_log = logging.getLogger("tensorweave.distributed")


def cluster_token() -> Optional[str]:
    return os.environ.get(TOKEN_ENV) or None


def call_metadata() -> Optional[tuple[tuple[str, str], ...]]:
    """The metadata every client call carries (None when no token is configured)."""
    token = cluster_token()
    return None if token is None else ((TOKEN_METADATA, token),)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def server_credentials() -> Optional[Any]:
    cert, key = os.environ.get(CERT_ENV), os.environ.get(KEY_ENV)
    if not cert and not key:
        return None
    if not (cert and key):
        raise ValueError(f"TLS needs both {CERT_ENV} and {KEY_ENV}")
    return grpc.ssl_server_credentials([(_read(key), _read(cert))])


def channel_credentials() -> Optional[Any]:
    ca = os.environ.get(CA_ENV) or os.environ.get(CERT_ENV)
    if not ca:
        return None
    return grpc.ssl_channel_credentials(root_certificates=_read(ca))


def channel_options() -> list[tuple[str, Any]]:
    name = os.environ.get(SERVER_NAME_ENV)
    return [("grpc.ssl_target_name_override", name)] if name else []


class TokenCheck:
    """Checks the cluster token of a call (constant-time comparison); logs refusals."""

    def __init__(self, token: Optional[str]) -> None:
        self._token = token.encode("utf-8") if token else None
        self._logged: dict[str, tuple[float, int]] = {}  # peer host -> (last logged, refusals since)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._token is not None

    def allowed(self, context: Any) -> bool:
        if self._token is None:
            return True
        for key, value in context.invocation_metadata() or ():
            if key == TOKEN_METADATA:
                given = value.encode("utf-8") if isinstance(value, str) else bytes(value)
                if hmac.compare_digest(given, self._token):
                    return True
        self._log_refusal(str(context.peer()))
        return False

    def _log_refusal(self, peer: str) -> None:
        host = peer.rpartition(":")[0] or peer  # "ipv4:10.0.0.7:53412": one line per host, not per port
        now = time.monotonic()
        with self._lock:
            last, quiet = self._logged.get(host, (float("-inf"), 0))
            if now - last < LOG_EVERY_S:
                self._logged[host] = (last, quiet + 1)
                return
            if len(self._logged) >= _MAX_LOGGED_HOSTS:
                self._logged.clear()
            self._logged[host] = (now, 0)
        more = f" ({quiet} more refused from {host} since the last report)" if quiet else ""
        _log.warning("Refused a call without a valid cluster token from %s%s", peer, more)
