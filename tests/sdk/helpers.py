"""Loopback tools for the SDK tests: a fault-injecting proxy, a black hole, row counts.

Nothing here stands in for EngramDB: the proxy forwards to the real server, and counts are
read from the server's own SQLite file.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from engramdb.config import Settings
from engramdb.contract.events import Episode, Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.embedding import HashingEmbedder
from engramdb.sdk.host import HostContext
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.factories import episode_body


def with_nodelay(live: LiveServer) -> LiveServer:
    """Return ``live`` (not started) serving with TCP_NODELAY on its connections.

    asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP; ``socket.socket()``
    reports protocol 0, so every answer of LiveServer waited ~40 ms on Nagle's algorithm and
    delayed ACKs. Re-wrapping the same descriptor lets the kernel report the protocol. Drop this
    once LiveServer binds ``socket.socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)``.
    """
    live._sock = socket.socket(fileno=live._sock.detach())
    live._thread = threading.Thread(target=live._server.run, kwargs={"sockets": [live._sock]})
    return live


class LateServer(LiveServer):
    """The real server, its port bound from the start but served only from ``start()``: until
    then a connection is refused, as from a server that is down. Keys are made in its store."""

    started = False

    def __init__(self, settings: Settings, store: Store) -> None:
        super().__init__(settings, store, HashingEmbedder())
        with_nodelay(self)

    def start(self) -> None:
        super().start()
        self.started = True

    def stop(self) -> None:
        if self.started:
            super().stop()
        else:
            self._sock.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def dead_url() -> str:
    """A loopback URL where nothing listens (connections are refused at once)."""
    return f"http://127.0.0.1:{free_port()}"


def host_for(scope: dict[str, Any], **overrides: Any) -> HostContext:
    """A direct, primary, interactive HostContext for a camelCase scope dict."""
    fields: dict[str, Any] = {
        "agent_id": scope["agentId"],
        "profile_id": scope["profileId"],
        "participant_scope_hash": scope["participantScopeHash"],
        "privacy_scope": scope["privacyScope"],
        "sandbox_eligible": scope["sandboxEligible"],
    }
    fields.update(overrides)
    return HostContext(**fields)


def make_episode(text: str, scope: dict[str, Any], *, turn: int = 0, session: str = "session-1") -> Episode:
    """A complete contract episode (id computed) under ``scope``."""
    body = episode_body(text, "Noted.", session=session, turn=turn)
    return EpisodeWrite.model_validate(body).to_event(Scope.model_validate(scope))


def stored_episodes(home: Path, tenant: str = "t1") -> list[str]:
    """Every EPISODE memory_id in the server's tenant file (duplicates included)."""
    path = home / "tenants" / f"{tenant}.sqlite3"
    if not path.exists():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:
        return [r[0] for r in db.execute("SELECT memory_id FROM memories WHERE source = 'EPISODE'")]


def wait_until(predicate: Any, timeout: float = 10.0, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    body: Any
    fault: str | None
    at: float


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyServer

    def log_message(self, *args: Any) -> None:  # keep test output clean
        return

    def _answer(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        proxy = self.server.proxy
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        fault = proxy.take_fault(self.command, self.path)
        proxy.seen.append(Seen(self.command, self.path, json.loads(raw) if raw else None, fault, time.monotonic()))
        with proxy.tracking():
            if fault in ("503", "429", "422"):
                code = {"503": "backend_unavailable", "429": "rate_limited", "422": "invalid_input"}[fault]
                self._answer(int(fault), json.dumps({"code": code, "message": "injected"}).encode())
                return
            if fault == "500":
                self._answer(500, b"Internal Server Error", "text/plain")
                return
            if fault == "html":  # another service at the address: a network's sign-in page
                self._answer(200, b"<html><body>Sign in to the network</body></html>", "text/html")
                return
            if fault == "trickle":  # a header line every 0.2 s: no wait for data is long, the answer never ends
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                while not proxy.release.wait(0.2):
                    self.wfile.write(b"x-slow: 1\r\n")
                self.close_connection = True
                return
            if fault in ("drop", "hang"):
                if fault == "hang":
                    proxy.release.wait(30)
                self.close_connection = True
                return
            time.sleep(proxy.delay)
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
            response = proxy.http.request(self.command, self.path, content=raw, headers=headers)
            if fault == "forward_then_drop":
                self.close_connection = True
                return
        # Answered outside tracking(): once the client has the answer it may send its next
        # request before this thread would have counted the first one out.
        self._answer(response.status_code, response.content, response.headers.get("content-type", "application/json"))

    do_GET = do_POST = do_PUT = do_DELETE = _handle


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    proxy: FaultProxy


class FaultProxy:
    """An HTTP proxy on loopback in front of a real server, with scripted faults.

    ``fail_next("503", "drop", ...)``: the next requests matching ``fault_on`` (method, path
    prefix) get those faults in order: an injected 503/429/500/422, a dropped connection
    (``drop``), a request forwarded whose answer is then lost (``forward_then_drop``), one
    that hangs until ``release`` is set (``hang``), a 200 in HTML (``html``), or an answer sent a
    header line at a time until ``release`` (``trickle``).
    """

    def __init__(self, upstream: str, fault_on: tuple[str, str | tuple[str, ...]] = ("POST", "/v1/")) -> None:
        self.http = httpx.Client(base_url=upstream, timeout=30, verify=False)  # plain http on loopback
        self.fault_on = fault_on
        self.seen: list[Seen] = []
        self.delay = 0.0
        self.release = threading.Event()
        self.inflight = 0
        self.max_inflight = 0
        self._faults: deque[str] = deque()
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def fail_next(self, *faults: str) -> None:
        with self._lock:
            self._faults.extend(faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def take_fault(self, method: str, path: str) -> str | None:
        with self._lock:
            if self._faults and method == self.fault_on[0] and path.startswith(self.fault_on[1]):
                return self._faults.popleft()
        return None

    @contextmanager
    def tracking(self) -> Iterator[None]:
        with self._lock:
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1

    def posts(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST" and s.path.split("?")[0] == path]

    def close(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        wait_until(lambda: self.inflight == 0, timeout=2)  # let forwards in flight finish
        self.http.close()


class BlackHole:
    """A loopback port that accepts TCP connections and never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def close(self) -> None:
        self._sock.close()
