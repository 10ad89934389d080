"""Whether a cluster's address answers, within a time the user sets, before its client library
is handed it: Ray's `ray.init` retries an address where nobody listens for ever (printing its own
warnings about the address it resolved the given one to), Dask's `Client` fails after 30 s with a
long traceback. Here: a TCP connection, and for Ray a gRPC (HTTP/2) server on the other end.

    timeout = connect_timeout(None)                          # --engine-timeout, else the env
    why = unreachable("10.0.0.5:6379", timeout, HTTP2)       # None: it answers
"""

from __future__ import annotations

import os
import socket

from gpuscope.errors import ConfigError

ENV = "GPUSCOPE_ENGINE_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
# the client's connection preface (RFC 9113 §3.4), then an empty SETTINGS frame
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS = 4  # the frame type every HTTP/2 server sends first


def connect_timeout(given: float | None) -> float:
    """Seconds to wait for a cluster: `given` (--engine-timeout), else $GPUSCOPE_ENGINE_TIMEOUT,
    else 30. ConfigError for a value that is not a positive number."""
    source, value = ("--engine-timeout", given) if given is not None else (ENV, os.environ.get(ENV))
    if value is None or value == "":
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ConfigError(f"{source} {value}: expected a positive number of seconds")
    return seconds


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of `host:port`, `scheme://host:port`, `[v6]:port`; None without a port."""
    rest = address.split("://", 1)[-1].split("/", 1)[0]
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


CONNECT, SPEAKS_FIRST, HTTP2 = "connect", "speaks first", "http2"


def unreachable(address: str, timeout_s: float, expect: str = CONNECT) -> str | None:
    """Why nothing usable answers at `address` within `timeout_s` (None: it answers; also when
    the address has no host:port to try, which the client library then resolves itself).
    `expect`: CONNECT (a TCP connection is taken), SPEAKS_FIRST (and the server says something
    unasked, as a Dask scheduler sends its handshake), HTTP2 (and it answers as an HTTP/2
    server, as gRPC servers — Ray's — do)."""
    found = host_port(address)
    if found is None:
        return None
    try:
        with socket.create_connection(found, timeout=timeout_s) as connection:
            if expect == HTTP2 and not _speaks_http2(connection):
                return "something answers there, but not a gRPC (HTTP/2) server"
            if expect == SPEAKS_FIRST and not connection.recv(1):
                return "the connection was closed at once"
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    except OSError as error:
        return error.strerror or type(error).__name__
    return None


def _speaks_http2(connection: socket.socket) -> bool:
    try:
        connection.sendall(_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = connection.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except TimeoutError:
        raise  # a listener that never answers: no answer in time
    except OSError:
        return False
    return head[3] == _SETTINGS
