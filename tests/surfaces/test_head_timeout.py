"""A request's head must arrive within a time (api/head_limit.py): a client with no key opened
connections and sent nothing, or a byte of a head now and then, and held each, and a file descriptor
of the server, for as long as it liked. Past the limit a silent connection is closed, and one in the
middle of a head is answered 408 and closed; a prompt request is served, and an idle kept-alive
connection stays open for its next request."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from engramdb.api import head_limit
from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer

LIMIT = 1.0  # seconds, this test's (the server's is 20)
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture
def port(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setattr(head_limit, "HEAD_SECONDS", LIMIT)
    live = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    live.start()
    try:
        yield int(urlsplit(live.url).port or 0)
    finally:
        live.stop()
        live.store.close()


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (b"" if it closes at once)."""
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    return got


def _response(sock: socket.socket) -> bytes:
    """One response to /healthz, read to the end of its body, the connection left open."""
    got = b""
    while not (b"\r\n\r\n" in got and got.endswith(b"}")):
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    return got


def test_a_connection_that_sends_nothing_is_closed_and_a_prompt_one_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as prompt:
        prompt.sendall(HEALTH)
        assert _response(prompt).startswith(b"HTTP/1.1 200")  # the control
    with socket.create_connection(("127.0.0.1", port), timeout=30) as silent:
        assert _answer(silent) == b""  # closed by the server (the read would wait 30 s otherwise)


def test_a_head_that_stops_half_way_is_answered_408_and_closed(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(LIMIT / 4)
        slow.sendall(b"X-Still: coming\r\n")  # bytes now and then do not hold it open
        answer = _answer(slow)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout") and b'"code": "request_timeout"' in answer, answer


def test_a_kept_alive_connection_waits_idle_but_not_for_a_late_head(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as kept:
        kept.sendall(HEALTH)
        assert _response(kept).startswith(b"HTTP/1.1 200")
        time.sleep(LIMIT * 2)  # idle past the head's limit: uvicorn's keep-alive (120 s) holds it
        kept.sendall(HEALTH)
        assert _response(kept).startswith(b"HTTP/1.1 200")  # the control: still open, and served
        kept.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head begun, never ended
        assert _answer(kept).startswith(b"HTTP/1.1 408")
