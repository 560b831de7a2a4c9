"""A search that costs as much as the budget lets one cost, a scope it is slow on, and clients
that keep sending it (issue 30)."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tests.conftest import LiveServer

# Every record of the scope is probed for 48 text matches it has none of ($not over an $or: no
# match ends a record's probing early), every record is counted, and a page of 1,000 is sorted on
# 8 properties: 98 of the 100 keys and all 8 orderBy keys, planned in milliseconds, and running for
# as long as the scope is large (0.3-0.5 s on 5,000 records, one at a time on 2 busy cores).
SLOWEST: dict[str, Any] = {
    "labels": ["TASK"],
    "where": {"$not": {"$or": [{f"p{i % 10}": {"$contains": f"absent{i}"}} for i in range(48)]}},
    "count": True,
    "orderBy": {f"p{i}": "desc" for i in range(8)},
    "limit": 1000,
}


def seed_records(http: Any, count: int) -> None:
    """``count`` TASK records of ten short properties each, written 500 at a time."""
    for start in range(0, count, 500):
        data = [{f"p{j}": f"w{(i * 7 + j) % 97}" for j in range(10)} for i in range(start, min(count, start + 500))]
        answer = http.post("/v1/records", json={"label": "TASK", "data": data})
        assert answer.status_code == 201, answer.text


class HostileClients:
    """``count`` threads, each sending ``body`` to the record search again and again while on."""

    def __init__(self, server: LiveServer, token: str, body: dict[str, Any], count: int = 8) -> None:
        self._server, self._token, self._body = server, token, body
        self._on, self._stop = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self.in_flight = 0
        self.answers: list[tuple[float, float, int, Any]] = []  # (sent, answered, status, body)
        self._threads = [threading.Thread(target=self._send, daemon=True) for _ in range(count)]
        for thread in self._threads:
            thread.start()

    def _send(self) -> None:
        with self._server.client(self._token) as http:
            while self._on.wait() and not self._stop.is_set():
                with self._lock:
                    self.in_flight += 1
                sent = time.monotonic()
                status, body = 0, {}
                try:
                    answer = http.post("/v1/records/search", json=self._body)
                    status, body = answer.status_code, {"code": "not JSON", "text": answer.text}
                    body = answer.json()
                except httpx.TransportError as error:  # kept as status 0: the test fails on it, not hangs
                    body = {"code": f"{type(error).__name__}: {error}"}
                except ValueError:  # an answer that is not JSON: kept as it came, the test fails on it
                    pass
                finally:
                    with self._lock:
                        self.in_flight -= 1
                        self.answers.append((sent, time.monotonic(), status, body))

    def start(self) -> None:
        """Send, and return once every thread has a search in flight."""
        self._on.set()
        while self.in_flight < len(self._threads):
            assert all(thread.is_alive() for thread in self._threads), "a hostile client died"
            time.sleep(0.01)

    def pause(self) -> None:
        """Stop sending, and return once no search is in flight."""
        self._on.clear()
        while self.in_flight:
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._on.set()
        for thread in self._threads:
            thread.join(60)

    def ran_during(self, start: float, end: float) -> bool:
        """True when a search that ran (answered, or cancelled at the statement timeout) was running
        during [start, end]; one refused for want of a place (503 overloaded) did not run."""
        ran = [(s, e) for s, e, status, body in self.answers if status == 200 or body.get("code") == "query_timeout"]
        return any(s < end and start < e for s, e in ran)
