"""The outbox: append before acknowledging, deliver in the background, never lose an event.

``append_*`` commits the canonical event to the profile's SQLite file and returns; a bounded
pool of worker threads delivers it. A 2xx (201 created or 200 already stored) removes the
entry; a network error, 408, 429 or 5xx schedules another attempt after ``0.25 * 2**n`` s with
jitter, and after ``max_attempts`` failures in a row the entry rests ``rest_seconds`` before a
new round (it stays on disk throughout). Such a failure also pauses the whole queue, its pause
doubling with each one in a row, with one probe at a time until the server takes one. Any other
4xx, or a body that no longer parses, moves it to the dead letters (``dead_letters()``,
``replay_dead()``). Entries left over from an earlier process are replayed on ``start``.
``close`` flushes for at most ``shutdown_timeout`` seconds; whatever is undelivered then stays on
disk for the next start.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engramdb.contract.events import Episode, Fact
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.errors import EngramError, InvalidInputError
from engramdb.models.memories import WriteResponse
from engramdb.models.operations.memories import WRITE_EPISODE, WRITE_FACT
from engramdb.sdk import operations as op
from engramdb.sdk.client import Client
from engramdb.sdk.errors import MalformedEntryError
from engramdb.sdk.operations import Call
from engramdb.sdk.outbox.store import DeadLetter, Entry, OutboxStore, SessionState

log = logging.getLogger(__name__)
EXTRACT = "extract"  # an episode entry whose delivery also queues its extraction


@dataclass(frozen=True)
class OutboxSettings:
    """Bounds of the outbox (reference numbers from RushDB's Hermes provider)."""

    max_pending: int = 512
    concurrency: int = 4
    max_attempts: int = 4
    backoff_base: float = 0.25
    backoff_cap: float = 30.0
    rest_seconds: float = 30.0
    shutdown_timeout: float = 2.0
    request_timeout: float = 10.0
    synchronous: str = "FULL"


def _json(event: dict[str, object]) -> str:
    # The complete contract event; its id was computed from canonical JSON already, so the
    # stored text only has to round-trip (sorted and compact, for readable diffs of the file).
    return json.dumps(event, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def entry_call(entry: Entry) -> Call[WriteResponse]:
    """Return the request that delivers ``entry``; MalformedEntryError if it cannot be read."""
    try:
        data = json.loads(entry.body)
        if not isinstance(data, dict):
            raise ValueError("the body is not a JSON object")
        if entry.kind == "episode":
            query = {"extract": True} if entry.origin == EXTRACT else {}  # queue its extraction, same transaction
            episode = EpisodeWrite.model_validate(data)
            return op.call_for(WRITE_EPISODE, op.inputs_for(WRITE_EPISODE, (), episode, query))
        if entry.kind == "fact" and entry.origin in ("stated", "derived"):
            body = FactWrite.model_validate(data)
            return op.call_for(WRITE_FACT, op.inputs_for(WRITE_FACT, (), body, {"origin": entry.origin}))
        raise ValueError(f"unknown entry kind {entry.kind!r} / origin {entry.origin!r}")
    except (ValueError, TypeError, InvalidInputError) as error:
        raise MalformedEntryError(f"outbox entry {entry.seq} is malformed: {error}"[:500], seq=entry.seq) from error


class Outbox:
    """A durable, bounded, replaying outbox over one profile folder."""

    def __init__(
        self,
        profile_dir: str | Path,
        client: Client | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        settings: OutboxSettings | None = None,
        start: bool = True,
        seed: int | None = None,
    ) -> None:
        self.settings = settings or OutboxSettings()
        if client is None and url is None:
            raise ValueError("an Outbox needs a client or a url")
        self._owns_client = client is None
        self.client = client or Client(str(url), api_key, timeout=self.settings.request_timeout)
        self.store = OutboxStore(
            profile_dir, max_pending=self.settings.max_pending, synchronous=self.settings.synchronous
        )
        self._cond = threading.Condition()
        self._inflight: set[int] = set()
        self._round: dict[int, int] = {}  # failures in a row, per entry, in this process
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._pause_until = 0.0  # after a server-level failure the whole queue waits, not one entry
        self._down = 0  # server-level failures in a row, whichever entries met them: the queue's backoff
        self._random = random.Random(seed)
        self.last_error: str | None = None  # the last delivery failure, retried or buried
        self.last_delivered_at: float | None = None  # when the server last took an entry (epoch s)
        self.extraction_unavailable: str | None = None  # why episodes go without their extraction
        if start:
            self.start()

    # -- the host side --------------------------------------------------------------------

    def append_episode(self, event: Episode, *, session: SessionState | None = None, extract: bool = False) -> bool:
        """Durably queue an episode; False if the same event is already pending.

        ``extract``: the server also queues an extraction of facts from it (when it has a model;
        when it has none the episode is delivered without, and ``extraction_unavailable`` says so).
        """
        origin = EXTRACT if extract and self.extraction_unavailable is None else "stated"
        return self._append("episode", event.event_id, _json(event.wire()), origin, session)

    def append_fact(self, event: Fact, *, origin: str = "stated") -> bool:
        """Durably queue a fact (``origin="derived"`` when a model wrote it)."""
        return self._append("fact", event.fact_id, _json(event.wire()), origin, None)

    def append_unresolved(
        self,
        kind: str,
        memory_id: str,
        body: Mapping[str, Any],
        *,
        origin: str = "stated",
        session: SessionState | None = None,
        extract: bool = False,
    ) -> bool:
        """Durably queue a write body whose participant is a raw ``userId`` (the server hashes it
        on delivery): an episode under its eventId, a fact under a key of its body (the server
        computes the factId, which covers the participant's hash)."""
        if kind == "episode":
            origin = EXTRACT if extract and self.extraction_unavailable is None else "stated"
        return self._append(kind, memory_id, _json(dict(body)), origin, session)

    def _append(self, kind: str, memory_id: str, body: str, origin: str, session: SessionState | None) -> bool:
        added = self.store.append(kind, memory_id, body, origin=origin, session=session)
        with self._cond:
            self._cond.notify()
        return added

    def start(self) -> None:
        """Start the workers; every entry left by an earlier process is due at once (replay)."""
        if self._threads:
            return
        self.store.expedite(time.time())
        for index in range(self.settings.concurrency):
            thread = threading.Thread(target=self._work, name=f"engram-outbox-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def flush(self, timeout: float | None = None) -> bool:
        """Try to deliver everything now, for at most ``timeout`` s; True if nothing is pending."""
        if self.store.closed:
            return False
        budget = self.settings.shutdown_timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        if self._threads:
            self.store.expedite(time.time())
        with self._cond:
            self._pause_until = 0.0
            self._cond.notify_all()
            while True:
                if self.store.count() == 0:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._threads:
                    return False
                self._cond.wait(min(remaining, 0.05))

    def close(self, timeout: float | None = None) -> bool:
        """Flush for at most ``timeout`` s, stop the workers, close; True if all was delivered.

        Undelivered entries stay in the file and are replayed by the next ``start``.
        """
        if self.store.closed:
            return False
        budget = self.settings.shutdown_timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        delivered = self.flush(budget)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for thread in self._threads:
            # Idle workers leave at once; a short grace lets them, even with a zero budget.
            thread.join(max(0.05, deadline - time.monotonic()))
        with self._cond:
            stuck = len(self._inflight)
        if stuck:
            log.warning("outbox closed with %d deliveries in flight; their entries stay on disk", stuck)
        left = self.store.count()
        if left:
            log.info("outbox closed with %d undelivered events kept in %s", left, self.store.path)
        self.store.close()
        if self._owns_client:
            self.client.close()
        return delivered

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inspection -----------------------------------------------------------------------

    def pending(self) -> list[Entry]:
        return self.store.pending()

    def dead_letters(self) -> list[DeadLetter]:
        return self.store.dead_letters()

    def replay_dead(self, seqs: Collection[int] | None = None) -> int:
        """Queue dead letters again (all, or those in ``seqs``); return how many."""
        moved = self.store.replay_dead(seqs)
        with self._cond:
            self._cond.notify_all()
        return moved

    # -- the workers ----------------------------------------------------------------------

    def _work(self) -> None:
        while (entry := self._claim()) is not None:
            try:
                self._deliver(entry)
            except Exception:
                # A worker is a job supervisor: a bug while handling one entry is logged and
                # the entry retried later; the loop, and the other entries, go on.
                log.exception("outbox worker failed on entry %d", entry.seq)
                self._retry(entry, "internal error")
            finally:
                with self._cond:
                    self._inflight.discard(entry.seq)
                    self._cond.notify_all()

    def _claim(self) -> Entry | None:
        with self._cond:
            while not self._stopping and not self.store.closed:
                now = time.time()
                if now < self._pause_until:
                    self._cond.wait(min(1.0, self._pause_until - now))
                    continue
                if self._down and self._inflight:  # the server failed: one probe at a time until it takes one
                    self._cond.wait(1.0)
                    continue
                due = self.store.due(now, exclude=self._inflight)
                if due:
                    self._inflight.add(due[0].seq)
                    return due[0]
                wake = self.store.next_due_at(exclude=self._inflight)
                # Wake at least once a second: another process may append to the same file.
                self._cond.wait(1.0 if wake is None else min(1.0, max(0.0, wake - now)))
            return None

    def _deliver(self, entry: Entry) -> None:
        try:
            call = entry_call(entry)
            self.client.send(call, timeout=self.settings.request_timeout)
        except MalformedEntryError as error:
            log.warning("outbox entry %d isolated as a dead letter: %s", entry.seq, error.message)
            self.store.bury(entry, error)
        except EngramError as error:
            if error.code == "model_not_configured" and entry.origin == EXTRACT:
                # The server has no model: the turn matters more than its extraction.
                self.extraction_unavailable = f"{error.code}: {error.message}"
                log.warning("episodes are delivered without extraction: %s", error.message)
                self.store.send_plain(entry.seq)
                return
            # Every 5xx is tried again, even one the server calls final: the event stays on disk
            # until a server takes it (a bug fixed, a table restored), never dropped by a failure.
            if error.retryable or error.http_status >= 500:
                self._retry(entry, f"{error.code}: {error.message}", server_down=True)
            else:
                # A refused key refuses every entry after this one too: say it as an error.
                level = logging.ERROR if error.http_status in (401, 403) else logging.WARNING
                log.log(
                    level,
                    "server refused outbox entry %d (%s %s): %s",
                    entry.seq,
                    error.http_status,
                    error.code,
                    error.message,
                )
                self.last_error = f"{error.http_status} {error.code}: {error.message}"
                self.store.bury(entry, error)
        else:
            self._round.pop(entry.seq, None)
            self.store.ack(entry.seq)
            self.last_delivered_at = time.time()
            with self._cond:
                self._down = 0  # the server is back: every worker delivers again (notified by _work)

    def _backoff(self, failures: int) -> float:
        """The wait after ``failures`` in a row: ``backoff_base`` doubling, capped, times a jitter of 0.5-1."""
        raw = self.settings.backoff_base * 2 ** min(failures - 1, 30)
        return float(min(self.settings.backoff_cap, raw) * self._random.uniform(0.5, 1.0))

    def _retry(self, entry: Entry, reason: str, *, server_down: bool = False) -> None:
        failures = self._round.get(entry.seq, 0) + 1
        if failures >= self.settings.max_attempts:
            self._round.pop(entry.seq, None)
            delay = self.settings.rest_seconds
        else:
            self._round[entry.seq] = failures
            delay = self._backoff(failures)
        log.debug("outbox entry %d failed (%s); next attempt in %.2f s", entry.seq, reason, delay)
        self.last_error = reason
        retry_at = time.time() + delay
        self.store.reschedule(entry.seq, retry_at, reason)
        if server_down:
            # Every entry would fail the same way: the queue backs off as one, its pause doubling
            # with each failure in a row whichever entry met it, and one probe goes out when the
            # pause ends, instead of N workers each spending their own entries' attempts.
            with self._cond:
                self._down += 1
                self._pause_until = max(self._pause_until, time.time() + self._backoff(self._down))
