"""The loopback server (the suite's, and `engram eval --rest`'s) keeps an idle connection open
longer than its client does, so a client's next request never meets the server closing it
(engramdb/api/keep_alive.py; `engram serve` is checked in tests/surfaces/test_cli.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import FastAPI

from engramdb.api.loopback import LoopbackServer
from tests.keepalive import answers_after_idle


def test_an_idle_connection_outlives_the_clients_idle_expiry() -> None:
    app = FastAPI()
    app.get("/healthz")(lambda: {"status": "ok"})
    server = LoopbackServer(app)
    server.start()
    try:
        first, after_idle = answers_after_idle(int(urlsplit(server.url).port or 0))
    finally:
        server.stop()
    assert first == b"HTTP/1.1 200 OK"  # the control: the connection answers, and is kept
    assert after_idle == b"HTTP/1.1 200 OK"  # and still answers after the pause, on the same socket
