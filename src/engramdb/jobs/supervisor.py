"""The job supervisor: runs each background job on its schedule, owned by the server's lifespan.

A job is a name, an interval and a function of the time it runs at. ``run_due`` runs every job
whose time has come, by the clock the supervisor was given (tests pass their own and call it
directly: no sleeps); the server's thread calls it in a loop. A job that fails is logged with
its traceback, its error is kept for ``GET /v1/jobs``, and it runs again at its next time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engramdb import clock
from engramdb.core.aging.sweep import sweep
from engramdb.core.aging.usage import UsageBuffer
from engramdb.models.aging import JobView
from engramdb.storage.port import Store

log = logging.getLogger(__name__)
Now = Callable[[], datetime]


@dataclass(frozen=True)
class Job:
    """A background job: ``run(now)`` returns what it did, as counts."""

    name: str
    interval_seconds: float
    run: Callable[[datetime], Mapping[str, int]]


@dataclass
class _State:
    job: Job
    next_run: datetime
    runs: int = 0
    last_run: datetime | None = None
    last_duration_ms: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    last_error: str | None = None


class Supervisor:
    """Runs jobs when they are due; keeps each one's last run, next run, counts and error."""

    def __init__(self, jobs: Sequence[Job], now: Now = clock.utc_now) -> None:
        self._now = now
        start = now()
        self._states = [_State(job, start) for job in jobs]
        self._lock = threading.Lock()  # one run at a time (the thread and a direct call)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_due(self) -> list[str]:
        """Run every job that is due now; return their names."""
        ran = []
        with self._lock:
            for state in self._states:
                now = self._now()
                if state.next_run <= now:
                    self._run(state, now)
                    ran.append(state.job.name)
        return ran

    def _run(self, state: _State, now: datetime) -> None:
        started = time.perf_counter()
        try:
            state.counts = dict(state.job.run(now))
            state.last_error = None
        except Exception as error:  # the supervisor boundary: log, record, run again next time
            log.exception("job %s failed", state.job.name)
            state.last_error = f"{type(error).__name__}: {error}"[:1000]
        state.runs += 1
        state.last_run = now
        state.last_duration_ms = (time.perf_counter() - started) * 1000
        state.next_run = now + timedelta(seconds=state.job.interval_seconds)

    def views(self) -> list[JobView]:
        with self._lock:
            return [
                JobView(
                    name=s.job.name,
                    interval_seconds=s.job.interval_seconds,
                    runs=s.runs,
                    last_run_at=clock.to_text(s.last_run) if s.last_run else None,
                    next_run_at=clock.to_text(s.next_run),
                    last_duration_ms=s.last_duration_ms,
                    counts=s.counts,
                    last_error=s.last_error,
                )
                for s in self._states
            ]

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="engram-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.run_due()
            with self._lock:
                due = min(s.next_run for s in self._states) if self._states else self._now()
            self._stop.wait(min(1.0, max(0.05, (due - self._now()).total_seconds())))


FRESHEN_SECONDS = 0.05  # how soon after a write (by this server or a worker process) copies take it in


def server_jobs(
    store: Store,
    usage: UsageBuffer,
    *,
    aging_seconds: float,
    usage_seconds: float,
    recalling: Callable[[], bool] = lambda: False,
) -> list[Job]:
    """The jobs a server runs: usage counts flushed (and memories counted for usage over time), every
    tenant's aging sweep, and the recently
    recalled scopes' copies kept up to date with writes, while no recall runs (``recalling``), so
    that a recall after a write does not take the write in itself."""

    def age(now: datetime) -> Mapping[str, int]:
        total: dict[str, int] = {"tenants": 0, "weighed": 0, "archived": 0, "erasedEpisodes": 0, "erasedFacts": 0}
        for name in store.tenant_names():
            counts = sweep(store.tenant(name), now)
            for key, value in (
                ("tenants", 1),
                ("weighed", counts.weighed),
                ("archived", counts.archived),
                ("erasedEpisodes", counts.erased_episodes),
                ("erasedFacts", counts.erased_facts),
            ):
                total[key] += value
        return total

    failing = {"until": 0.0, "wait": 0.0}  # after a failure the job pauses, doubling up to 5 s

    def freshen(_: datetime) -> Mapping[str, int]:
        if recalling() or time.monotonic() < failing["until"]:
            return {"scopes": 0}
        try:
            done = store.freshen(stop=recalling)
        except Exception:
            failing["wait"] = min(5.0, max(FRESHEN_SECONDS, 2 * failing["wait"]))
            failing["until"] = time.monotonic() + failing["wait"]
            raise
        failing["wait"] = 0.0
        return {"scopes": done}

    return [
        Job(
            "usage",
            usage_seconds,
            lambda now: {"rows": usage.flush(store), "counted": usage.count_memories(store, now)},
        ),
        Job("aging", aging_seconds, age),
        Job("copies", FRESHEN_SECONDS, freshen),
    ]
