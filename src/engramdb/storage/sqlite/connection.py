"""SQLite connections: one writer behind a lock, one reader per thread, WAL, errors translated.

Writes use ``BEGIN IMMEDIATE`` so a second process waits on ``busy_timeout`` instead of failing
half-way; readers see the last committed state and never block the writer.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engramdb.errors import BackendUnavailableError, EngramError

log = logging.getLogger(__name__)

# Extended result codes (the low byte is the primary code).
_BUSY, _LOCKED, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _READONLY = 5, 6, 10, 11, 13, 14, 8


def translate(error: sqlite3.Error) -> EngramError:
    """Return our error for a driver error, by SQLite result code (never by message)."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code in (_BUSY, _LOCKED):
        return BackendUnavailableError("the tenant database is busy; retry", sqlite_code=code)
    if code in (_IOERR, _FULL, _CANTOPEN, _READONLY, _CORRUPT):
        return BackendUnavailableError("the tenant database cannot be written", sqlite_code=code)
    return EngramError(f"storage error: {error}", sqlite_code=code)


def _connect(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


class Connections:
    """The writer and per-thread readers of one database file."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL") -> None:
        self.path = path
        self._synchronous = synchronous
        self._writer = _connect(path, synchronous)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one ``BEGIN IMMEDIATE`` transaction; roll back on any error."""
        with self._write_lock:
            conn = self._writer
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise translate(error) from error
            try:
                yield conn
                conn.execute("COMMIT")
            except sqlite3.Error as error:
                conn.execute("ROLLBACK")
                raise translate(error) from error
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def read(self) -> sqlite3.Connection:
        """Return this thread's reader connection."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path, self._synchronous)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection of this file."""
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.close()
