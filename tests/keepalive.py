"""One connection, two requests, a pause between them longer than an HTTP client keeps it idle."""

from __future__ import annotations

import socket
import time

import httpx

# How long httpx (the SDK's client) keeps an idle connection before it opens a new one: a server
# that closes sooner races the client's next request (engramdb/api/keep_alive.py).
CLIENT_IDLE_SECONDS = httpx.Limits().keepalive_expiry or 5.0
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def _answer(sock: socket.socket) -> bytes:
    """Send one request and read its whole response; its status line (b"" if the server closed)."""
    sock.sendall(REQUEST)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        received += chunk
    head, body = received.split(b"\r\n\r\n", 1)
    lines = head.lower().split(b"\r\n")
    lengths = [int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")]
    assert lengths, head  # /healthz answers with a length, not in chunks
    while len(body) < lengths[0]:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        body += chunk
    return head.split(b"\r\n", 1)[0]


def answers_after_idle(port: int) -> tuple[bytes, bytes]:
    """The status lines of a request, and of a second one on the same connection after it sat idle
    half a second longer than the client would keep it."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        first = _answer(sock)
        time.sleep(CLIENT_IDLE_SECONDS + 0.5)
        try:
            return first, _answer(sock)
        except ConnectionError:  # reset: the server closed it
            return first, b""
