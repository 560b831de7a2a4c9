"""A request's line and headers are capped (api/head_limit.py): a client, with no key, that sent one
huge header held the event loop for seconds (the parser's cost grows with the square of a header's
size). Past 64 KiB before the headers end the connection is answered 431, as JSON, and closed; a
request under the cap, and a large body after a small head, are served as ever."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from engramdb.api.head_limit import MAX_HEAD_BYTES
from tests.conftest import LiveServer
from tests.factories import episode_body


def _status(port: int, header_bytes: int) -> bytes:
    """Send a /healthz whose one header holds ``header_bytes``; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * header_bytes + b"\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(65536)):
            answer += chunk
        return answer.split(b"\r\n", 1)[0] + (b" json" if b"headers_too_large" in answer else b"")


def test_a_head_past_the_cap_is_refused_431_and_one_under_it_served(server: LiveServer) -> None:
    port = int(urlsplit(server.url).port or 0)
    assert _status(port, MAX_HEAD_BYTES // 2) == b"HTTP/1.1 200 OK"  # the control
    assert _status(port, MAX_HEAD_BYTES + 40_000) == b"HTTP/1.1 431 Request Header Fields Too Large json"
    with server.client(server.key()) as http:  # a large body after a small head is no head
        big = [episode_body(f"turn {i}: " + "x " * 5_000, "noted", turn=i) for i in range(20)]  # ~200 KB
        assert http.post("/v1/episodes/batch", json={"episodes": big}).status_code == 200
        assert http.post("/v1/episodes", json=episode_body("after it, on one connection")).status_code == 201


def test_trailers_past_the_cap_close_the_connection(server: LiveServer) -> None:
    """A chunked body's trailers are built by the parser as headers are, a read at a time: counted
    toward the cap too (a 1 MB trailer comes in many reads; one that comes in one read costs one copy)."""
    port = int(urlsplit(server.url).port or 0)
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        head = b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"
        answer, closed = b"", False
        try:
            sock.sendall(head + b"X-Trailer: " + b"a" * 1_000_000 + b"\r\n\r\n")
            while chunk := sock.recv(65536):  # to the end: the server closes the connection
                answer += chunk
            closed = True
        except ConnectionError:  # closed while the rest was still on its way: a reset
            closed = True
    assert closed  # where the whole trailer was taken, the connection stayed open for the next request
    assert answer == b"" or answer.startswith((b"HTTP/1.1 405", b"HTTP/1.1 431")), answer[:300]
