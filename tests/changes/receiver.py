"""A webhook endpoint on 127.0.0.1 that takes EngramDB's deliveries with the receiver
docs/operations.md shows (its code is read from the page), and can misbehave on purpose: fail a
share of calls (before applying the delivery, or after), or be down (its port closed)."""

from __future__ import annotations

import random
import socket
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.docs.blocks import read


class _Server(ThreadingHTTPServer):
    allow_reuse_address = True  # listen again on the port just closed
    daemon_threads = True


def documented_receiver() -> dict[str, Any]:
    """The names the receiver block of docs/operations.md defines (``verify``, ``handle``)."""
    [block] = [b for b in read("docs/operations.md").blocks if b.language == "python" and "def verify(" in b.code]
    names: dict[str, Any] = {}
    exec(compile(block.code, str(block), "exec"), names)
    return names


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Receiver:
    """An endpoint applying deliveries in the order they are taken; what it saw, counted."""

    def __init__(self, *, fail_share: float = 0.0, seed: int = 7) -> None:
        self.secret = ""
        self.fail_share = fail_share
        self.applied: list[dict[str, Any]] = []  # the changes applied, in order
        self.taken: list[str] = []  # delivery ids applied, in order
        self.arrivals: list[str] = []  # every delivery id sent, as it came (failed calls too)
        self.raw: list[tuple[str, bytes]] = []  # every call's signature header and body, as it came
        self.seen: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self._names = documented_receiver()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def handle(self, header: str, body: bytes, delivery_id: str) -> int:
        """What the endpoint answers a call; injected failures around the documented handler."""
        with self._lock:
            self.counts["calls"] += 1
            self.arrivals.append(delivery_id)
            self.raw.append((header, body))
            roll = self._rng.random()
            if roll < self.fail_share / 2:
                self.counts["failed_before"] += 1
                return 500
            applied_before = len(self.taken)
            status: int = self._names["handle"](self.secret, header, body, self.seen, self._apply(delivery_id))
            if status == 401:
                self.counts["refused"] += 1
            elif len(self.taken) == applied_before:
                self.counts["seen_again"] += 1
            if status == 200 and roll < self.fail_share:
                self.counts["failed_after"] += 1  # applied, but the answer is lost
                return 500
            return status

    def _apply(self, delivery_id: str) -> Callable[[list[dict[str, Any]]], None]:
        def apply(changes: list[dict[str, Any]]) -> None:
            self.applied.extend(changes)
            self.taken.append(delivery_id)

        return apply

    def start(self) -> None:
        """Listen (again, on the same port)."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                if len(body) < length:  # the sender was killed mid-call: nothing whole arrived, no one to answer
                    with receiver._lock:
                        receiver.counts["torn"] += 1
                    return
                status = receiver.handle(
                    self.headers.get("EngramDB-Signature", ""), body, self.headers.get("EngramDB-Delivery", "")
                )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test counts calls itself."""

        self._server = _Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Close the port: calls are refused until ``start``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Receiver:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
