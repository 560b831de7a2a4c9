"""Endpoints that answer slowly on purpose, on loopback: one that drips its answer a byte at a time
(httpx's timeouts are per read, so it held a delivery thread for as long as it dripped) has its try
cut off at the timeout; and one tenant's endpoints that never answer leave a thread to another
tenant, whose delivery arrives while they still hang."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engramdb.config import Settings
from tests.changes.conftest import FAST
from tests.changes.receiver import Receiver
from tests.changes.test_webhooks import _register as register_receiver
from tests.changes.test_webhooks import _write, wait_for
from tests.conftest import LiveServer

TIMEOUT = 8.0  # a try's whole time: far shorter than the slow endpoints take


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    webhooks = FAST.model_copy(update={"timeout_seconds": TIMEOUT, "concurrency": 2, "attempts": 15})
    return Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05, webhooks=webhooks)


class SlowEndpoint:
    """Reads each request, then drips ``HTTP/1.1 200 OK`` and an endless header a byte every 0.2 s
    (``drip``), or says nothing (never answers); notes when each connection opened and closed."""

    def __init__(self, *, drip: bool) -> None:
        self.drip = drip
        self.opened: list[float] = []
        self.closed: list[float] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/hook"
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.opened.append(time.monotonic())
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100_000
        with conn:
            conn.settimeout(0.2)
            sent = 0
            while not self._stop.is_set():
                try:
                    if not conn.recv(65536) and sent == 0:
                        break  # the client went away before the answer began
                except TimeoutError:
                    pass
                except OSError:
                    break
                if self.drip:
                    try:
                        conn.sendall(answer[sent : sent + 1])
                        sent += 1
                    except OSError:
                        break  # the client closed its end
        self.closed.append(time.monotonic())

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


@pytest.fixture
def slow_endpoints() -> Iterator[list[SlowEndpoint]]:
    made: list[SlowEndpoint] = []
    yield made
    for endpoint in made:
        endpoint.close()


def _register_url(http: httpx.Client, url: str) -> dict[str, object]:
    answer = http.post("/v1/webhooks", json={"url": url})
    assert answer.status_code == 201, answer.text
    created: dict[str, object] = answer.json()
    return created


def test_a_dripped_answer_is_cut_off_at_the_timeout_and_the_try_fails(
    server: LiveServer, slow_endpoints: list[SlowEndpoint]
) -> None:
    drip = SlowEndpoint(drip=True)  # its status line and header would take 100,000 x 0.2 s
    slow_endpoints.append(drip)
    with server.client(server.key(role="admin")) as admin:
        hook = _register_url(admin, drip.url)
        _write(admin, 1)
        wait_for(lambda: bool(drip.opened))

        def failed() -> str | None:
            [listed] = [w for w in admin.get("/v1/webhooks").json()["webhooks"] if w["webhookId"] == hook["webhookId"]]
            return listed["lastError"]  # type: ignore[no-any-return]

        wait_for(lambda: failed() is not None, seconds=60)
        assert failed() == f"no answer within {TIMEOUT:g} s"
        wait_for(lambda: bool(drip.closed))  # the deliverer let go of the connection
        assert drip.closed[0] - drip.opened[0] < 100_000 * 0.2  # long before the drip would have ended


def test_one_tenants_hanging_endpoints_leave_a_thread_to_another_tenant(
    server: LiveServer, slow_endpoints: list[SlowEndpoint]
) -> None:
    hang = SlowEndpoint(drip=False)
    slow_endpoints.append(hang)
    with (
        server.client(server.key(tenant="t1", role="admin")) as first,
        server.client(server.key(tenant="t2", role="admin")) as second,
        Receiver() as receiver,
    ):
        for _ in range(2):  # as many endpoints as the deliverer has threads
            _register_url(first, hang.url)
        register_receiver(second, receiver)
        _write(first, 1)  # both of t1's endpoints hang on it
        wait_for(lambda: bool(hang.opened))
        _write(second, 1)  # t2's endpoint answers at once
        wait_for(lambda: len(receiver.applied) == 1)
        arrived, opened, closed = time.monotonic(), len(hang.opened), list(hang.closed)
        assert opened == 1  # the positive control: t1's try was in flight, on one thread: the other was t2's
        assert not closed or closed[0] > arrived  # ... and still hanging when t2's change arrived


def test_a_tenants_endpoints_take_turns_on_its_share_of_the_threads(server: LiveServer) -> None:
    """Two threads, one tenant: its share is one at a time, and each of its three endpoints gets the
    change (the least recently started goes first; the first endpoints alone were tried before)."""
    with server.client(server.key(role="admin")) as admin, Receiver() as a, Receiver() as b, Receiver() as c:
        for receiver in (a, b, c):
            register_receiver(admin, receiver)
        _write(admin, 1)  # every endpoint gets this change
        wait_for(lambda: all(len(r.applied) == 1 for r in (a, b, c)))
        _write(admin, 1, start=1)  # the control that turns go on: each gets the next too
        wait_for(lambda: all(len(r.applied) == 2 for r in (a, b, c)))
