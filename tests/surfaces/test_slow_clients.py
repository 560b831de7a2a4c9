"""A client cannot hold a connection by sending slowly (api/slow_clients.py): a client with no key
opened connections and sent nothing, or a byte of a head now and then, or of a body its refusal left
unread, and held each, and a file descriptor of the server, for as long as it liked. Past the limit a
silent connection is closed, one in the middle of a head is answered 408 and closed, and one still
owing a body after its answer is closed; a prompt request is served, an idle kept-alive connection
stays open for its next request, and a request pipelined behind a slow one waits for it."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from engramdb.api import slow_clients
from engramdb.config import Settings
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.surfaces.test_recall_lane import QUESTION, HeldQuestions

LIMIT = 1.0  # seconds, this test's (the server's is 20)
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture
def embedder() -> HeldQuestions:
    return HeldQuestions()


@pytest.fixture
def live(settings: Settings, monkeypatch: pytest.MonkeyPatch, embedder: HeldQuestions) -> Iterator[LiveServer]:
    monkeypatch.setattr(slow_clients, "HEAD_SECONDS", LIMIT)
    server = LiveServer(settings, SQLiteStore(settings.home), embedder)
    server.start()
    try:
        yield server
    finally:
        embedder.release.set()
        server.stop()
        server.store.close()


@pytest.fixture
def port(live: LiveServer) -> int:
    return int(urlsplit(live.url).port or 0)


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


def test_a_request_pipelined_behind_a_slow_one_waits_for_it(live: LiveServer, embedder: HeldQuestions) -> None:
    """The deadline does not run while a response is under way: the recall is held past it, a whole
    request and half of another's head come behind it, and all three are answered."""
    token = live.key()
    body = json.dumps({"scope": scope_fields(), "limit": 3, "query": f"{QUESTION} held"}).encode()
    recall = b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token.encode()
    recall += b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    with socket.create_connection(("127.0.0.1", int(urlsplit(live.url).port or 0)), timeout=30) as sock:
        sock.sendall(recall)
        deadline = time.monotonic() + 20
        while embedder.held == 0:
            assert time.monotonic() < deadline, "the recall never reached the embedder"
            time.sleep(0.01)
        sock.sendall(HEALTH + b"GET /healthz HTTP/1.1\r\n")
        time.sleep(LIMIT * 2)  # the head's deadline, were it running
        embedder.release.set()
        time.sleep(LIMIT / 4)
        sock.sendall(b"Host: 127.0.0.1\r\n\r\n")
        got = b""
        while got.count(b"HTTP/1.1 ") < 3 or not got.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, got
            got += chunk
    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", got) == [b"200", b"200", b"200"], got[:600]


def test_a_body_its_refusal_left_unread_is_not_waited_for(port: int) -> None:
    declared = b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as prompt:  # the control
        prompt.sendall(declared + b"x" * 1000)
        assert _response(prompt).startswith(b"HTTP/1.1 401")  # no key
        prompt.sendall(HEALTH)
        assert _response(prompt).startswith(b"HTTP/1.1 200")  # the body came whole: the connection is kept
    with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
        slow.sendall(declared + b"x" * 10)
        assert _response(slow).startswith(b"HTTP/1.1 401")
        closed = False
        try:
            for _ in range(int(LIMIT * 40)):  # a byte every LIMIT / 4, ten times past the limit
                slow.sendall(b"x")
                time.sleep(LIMIT / 4)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        if not closed:
            slow.settimeout(LIMIT * 4)
            closed = slow.recv(1) == b""
        assert closed
