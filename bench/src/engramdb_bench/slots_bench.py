"""``engram bench slots``: how a fact write and a fact's history cost as one slot's versions grow.

An agent that keeps "the user's current task" writes one fact slot every turn, so the slot holds
as many versions as there were turns. For each backend, ``versions`` facts go into ONE single-valued
slot through the service (each supersedes the last, each a second later in valid time); the write
times of each window of ``window`` writes are kept, then the history of the newest fact is read
``reads`` times. Reported: the median write in the first and the last window and their ratio (1.0:
a write costs the same however many versions came before; a ratio, so a busy machine slows both
ends alike), and the history read's median with its ratio to the median write.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engramdb import clock
from engramdb.config import Settings
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.lifecycle import FactHistoryQuery
from engramdb_bench.scale import bench_home, memory_mb, open_backend

BACKENDS = ("sqlite", "postgres")
OPERATOR = Caller(tenant="bench", key_id="bench-operator", role="admin")
SCOPE = {
    "agentId": "bench",
    "profileId": "default",
    "privacyScope": "private",
    "participantScopeHash": "0" * 64,
    "sandboxEligible": False,
}
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
Progress = Callable[[str], None]


def run(
    backends: Sequence[str], *, versions: int, window: int, reads: int, pg_url: str | None, progress: Progress
) -> dict[str, Any]:
    """Measure every backend; start a throwaway PostgreSQL when none is given."""
    results = []
    with bench_home("engram-slots-", backends, pg_url) as (home, url, throwaway):
        for backend in backends:
            progress(f"{backend}: {versions:,} versions of one slot")
            results.append(_measure(backend, home / backend, url, versions, window, reads, progress))
    return {
        "benchmark": "slots",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "memoryMb": memory_mb()},
        "postgres": {"throwaway": throwaway} if "postgres" in backends else None,
        "versions": versions,
        "window": window,
        "results": results,
    }


def _measure(
    backend: str, home: Path, pg_url: str | None, versions: int, window: int, reads: int, progress: Progress
) -> dict[str, Any]:
    store = open_backend(backend, home, pg_url, "slots")
    try:
        store.tenant(OPERATOR.tenant, create=True)
        service = MemoryService(store, HashingEmbedder(), Settings(home=home, embedder="hashing"))
        windows: list[float] = []
        times: list[float] = []
        last = ""
        for n in range(versions):
            body = {
                **SCOPE,
                "subjectKey": "user",
                "kind": "current_task",
                "text": f"The user is working on task {n}.",
                "validFrom": clock.to_text(START + dt.timedelta(seconds=n)),
                "sourceEventId": f"turn-{n}",
            }
            started = time.perf_counter()
            last = service.writes.write_fact(OPERATOR, FactWrite.model_validate(body)).id
            times.append((time.perf_counter() - started) * 1000)
            if len(times) == window:
                windows.append(statistics.median(times))
                times = []
        history = []
        listed = 0
        for _ in range(reads):
            started = time.perf_counter()
            listed = _whole_history(service, last)
            history.append((time.perf_counter() - started) * 1000)
        first, final = round(windows[0], 3), round(windows[-1], 3)  # the ratio is of the figures shown
        read = statistics.median(history)
        progress(
            f"  write {first:.2f} ms in the first {window}, {final:.2f} ms in the last: {final / first:.2f}x; "
            f"history of {listed:,} versions {read:.1f} ms"
        )
        return {
            "backend": backend,
            "versions": listed,
            "windowMedianMs": [round(w, 3) for w in windows],
            "firstWriteMs": first,
            "lastWriteMs": final,
            "lastOverFirst": round(final / first, 3),
            "historyMs": round(read, 2),
            "historyOverWrite": round(read / first, 1),
        }
    finally:
        store.close()


def _whole_history(service: MemoryService, fact_id: str) -> int:
    """Read every version of the fact's history, a page of 1,000 at a time; how many there were."""
    listed, cursor = 0, None
    while True:
        query = FactHistoryQuery.model_validate({**SCOPE, "limit": 1000, "cursor": cursor})
        page = service.reads.fact_history(OPERATOR, fact_id, query)
        listed += len(page.versions)
        if page.next_cursor is None:
            return listed
        cursor = page.next_cursor
