"""The outbox file: a SQLite database in the profile folder, one row per undelivered event.

``pending`` holds what the server has not acknowledged, ``dead`` what it refused (4xx) or what
could not be read back; ``sessions`` keeps each session's turn counter beside the events so that
an episode and the counter that names it commit together. Every method is one short
transaction; the connection is shared by the host thread and the workers under one lock.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engramdb.errors import EngramError
from engramdb.sdk.errors import OutboxFullError

FILE_NAME = "outbox.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pending (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT    NOT NULL,
    memory_id  TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    origin     TEXT    NOT NULL DEFAULT 'stated',
    attempts   INTEGER NOT NULL DEFAULT 0,
    next_at    REAL    NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at REAL    NOT NULL,
    UNIQUE (kind, memory_id)
);
CREATE INDEX IF NOT EXISTS pending_due ON pending (next_at, seq);
CREATE TABLE IF NOT EXISTS dead (
    seq           INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL,
    memory_id     TEXT    NOT NULL,
    body          TEXT    NOT NULL,
    origin        TEXT    NOT NULL,
    attempts      INTEGER NOT NULL,
    error_code    TEXT    NOT NULL,
    http_status   INTEGER NOT NULL,
    error_message TEXT    NOT NULL,
    created_at    REAL    NOT NULL,
    dead_at       REAL    NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session_id    TEXT PRIMARY KEY,
    next_turn     INTEGER NOT NULL,
    last_digest   TEXT,
    last_event_id TEXT
);
"""
# Columns are cast on the way out so that a damaged row still reads, and is then isolated.
_ENTRY = (
    "SELECT seq, CAST(kind AS TEXT), CAST(memory_id AS TEXT), CAST(body AS TEXT), "
    "CAST(origin AS TEXT), CAST(attempts AS INTEGER), CAST(next_at AS REAL), "
    "CAST(last_error AS TEXT), CAST(created_at AS REAL) FROM pending"
)


@dataclass(frozen=True)
class Entry:
    """One pending event: what to send, and how delivery has gone so far."""

    seq: int
    kind: str
    memory_id: str
    body: str
    origin: str
    attempts: int
    next_at: float
    last_error: str | None
    created_at: float


@dataclass(frozen=True)
class DeadLetter:
    """An event the server refused (or that could not be read), with the reason."""

    seq: int
    kind: str
    memory_id: str
    body: str
    origin: str
    attempts: int
    error_code: str
    http_status: int
    error_message: str
    created_at: float
    dead_at: float


@dataclass(frozen=True)
class SessionState:
    """A session's next turn index and the last pair it captured (to recognise a retry)."""

    session_id: str
    next_turn: int
    last_digest: str | None = None
    last_event_id: str | None = None


class OutboxStore:
    """The durable queue of one profile folder."""

    def __init__(self, profile_dir: str | Path, *, max_pending: int = 512, synchronous: str = "FULL") -> None:
        self.path = Path(profile_dir).expanduser() / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_pending = max_pending
        self._lock = threading.RLock()
        self._closed = False
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={_pragma(synchronous)}")
        self._db.executescript(_SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"outbox {self.path} is closed")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @property
    def closed(self) -> bool:
        return self._closed

    # -- the host side --------------------------------------------------------------------

    def append(
        self,
        kind: str,
        memory_id: str,
        body: str,
        *,
        origin: str = "stated",
        session: SessionState | None = None,
    ) -> bool:
        """Store an event durably; False if the same event is already pending.

        Raises OutboxFullError, appending nothing, when ``max_pending`` entries are pending.
        """
        with self._tx() as db:
            known = db.execute("SELECT 1 FROM pending WHERE kind = ? AND memory_id = ?", (kind, memory_id)).fetchone()
            if known is None:
                (count,) = db.execute("SELECT count(*) FROM pending").fetchone()
                if count >= self.max_pending:
                    raise OutboxFullError(
                        f"the outbox holds {count} undelivered events (limit {self.max_pending})",
                        limit=self.max_pending,
                    )
                db.execute(
                    "INSERT INTO pending (kind, memory_id, body, origin, created_at) VALUES (?, ?, ?, ?, ?)",
                    (kind, memory_id, body, origin, time.time()),
                )
            if session is not None:
                db.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?)",
                    (session.session_id, session.next_turn, session.last_digest, session.last_event_id),
                )
        return known is None

    def session_state(self, session_id: str) -> SessionState | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return SessionState(*row) if row else None

    # -- the worker side ------------------------------------------------------------------

    def due(self, now: float, *, exclude: Collection[int] = (), limit: int = 1) -> list[Entry]:
        """Return up to ``limit`` claimable entries due at ``now``, oldest first."""
        sql = f"{_ENTRY} AS p WHERE next_at <= ? AND {_claimable(exclude)} ORDER BY next_at, seq LIMIT ?"
        with self._lock:
            rows = self._db.execute(sql, (now, *exclude, limit)).fetchall()
        return [Entry(*row) for row in rows]

    def next_due_at(self, *, exclude: Collection[int] = ()) -> float | None:
        """Return when the next claimable entry falls due (None if there is none)."""
        sql = f"SELECT min(next_at) FROM pending AS p WHERE {_claimable(exclude)}"
        with self._lock:
            (value,) = self._db.execute(sql, tuple(exclude)).fetchone()
        return float(value) if value is not None else None

    def ack(self, seq: int) -> None:
        """Remove an entry the server acknowledged (a no-op once the store is closed)."""
        with self._lock:
            if not self._closed:
                self._db.execute("DELETE FROM pending WHERE seq = ?", (seq,))

    def reschedule(self, seq: int, next_at: float, error: str) -> None:
        """Count a failed attempt and set when to try again."""
        with self._lock:
            if not self._closed:
                self._db.execute(
                    "UPDATE pending SET attempts = attempts + 1, next_at = ?, last_error = ? WHERE seq = ?",
                    (next_at, error[:1000], seq),
                )

    def bury(self, entry: Entry, error: EngramError) -> None:
        """Move an entry to the dead letters with the error that stopped it."""
        with self._lock:
            if self._closed:
                return
            with self._tx() as db:
                db.execute(
                    "INSERT OR REPLACE INTO dead VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.seq,
                        entry.kind or "",
                        entry.memory_id or "",
                        entry.body or "",
                        entry.origin or "",
                        entry.attempts + 1,
                        error.code,
                        error.http_status,
                        error.message[:1000],
                        entry.created_at or 0.0,
                        time.time(),
                    ),
                )
                db.execute("DELETE FROM pending WHERE seq = ?", (entry.seq,))

    def send_plain(self, seq: int) -> None:
        """Deliver an episode entry without its extraction (the server has no model): at once."""
        with self._lock:
            if not self._closed:
                self._db.execute("UPDATE pending SET origin = 'stated', next_at = 0 WHERE seq = ?", (seq,))

    def expedite(self, now: float) -> None:
        """Make every pending entry due now (replay on start; a flush)."""
        with self._tx() as db:
            db.execute("UPDATE pending SET next_at = ? WHERE next_at > ?", (now, now))

    # -- inspection and replay ------------------------------------------------------------

    def count(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM pending").fetchone()
        return int(count)

    def pending(self, limit: int = 1000) -> list[Entry]:
        with self._lock:
            rows = self._db.execute(f"{_ENTRY} ORDER BY seq LIMIT ?", (limit,)).fetchall()
        return [Entry(*row) for row in rows]

    def dead_letters(self, limit: int = 1000) -> list[DeadLetter]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM dead ORDER BY seq LIMIT ?", (limit,)).fetchall()
        return [DeadLetter(*row) for row in rows]

    def replay_dead(self, seqs: Collection[int] | None = None) -> int:
        """Move dead letters (all, or those in ``seqs``) back to pending; return how many."""
        where, args = ("", ()) if seqs is None else (f"WHERE seq IN ({','.join('?' * len(seqs))})", tuple(seqs))
        with self._tx() as db:
            rows = db.execute(
                f"SELECT seq, kind, memory_id, body, origin, created_at FROM dead {where}", args
            ).fetchall()
            for seq, kind, memory_id, body, origin, created_at in rows:
                db.execute(
                    "INSERT OR IGNORE INTO pending (kind, memory_id, body, origin, created_at) VALUES (?, ?, ?, ?, ?)",
                    (kind, memory_id, body, origin, created_at),
                )
                db.execute("DELETE FROM dead WHERE seq = ?", (seq,))
        return len(rows)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()


def _claimable(exclude: Collection[int]) -> str:
    """SQL condition on ``pending AS p``: not claimed, and no earlier fact still pending.

    Facts go one at a time in the order they were appended (a replacement names the fact it
    supersedes, which must be stored first); episodes are independent of each other.
    """
    return (
        f"p.seq NOT IN ({','.join('?' * len(exclude))}) AND (p.kind != 'fact' OR NOT EXISTS "
        "(SELECT 1 FROM pending AS q WHERE q.kind = 'fact' AND q.seq < p.seq))"
    )


def _pragma(value: str) -> str:
    if value.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {value!r}")
    return value.upper()
