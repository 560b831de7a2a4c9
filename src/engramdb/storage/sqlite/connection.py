"""SQLite connections: one writer behind a lock, one reader per thread, WAL, errors translated.

Writes use ``BEGIN IMMEDIATE`` so a second process waits on the busy timeout instead of failing
half-way; readers see the last committed state and never block the writer. Every driver call
runs inside ``write()`` or ``reading()`` (or the helpers built on them), which turn SQLite errors
into EngramDB errors by result code (storage/sqlite/result_codes.py).

Closing never frees a connection another thread is using: the sqlite3 module crashes the process
(a segfault) when a connection is closed under a running read. ``close()`` waits for the write in
progress, and a reader in use is closed by its last read as it ends; a read or write after
``close()`` fails as one on a closed database does.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engramdb.storage.sqlite.result_codes import translated

log = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT = 10.0  # seconds a writer waits for another process's write lock


def _connect(path: Path, synchronous: str, busy_timeout: float) -> sqlite3.Connection:
    with translated():
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=busy_timeout)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")  # deleted text is overwritten, not left in free pages
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        return conn


def _roll_back(conn: sqlite3.Connection) -> None:
    """End a failed write; SQLite may already have rolled it back (a full disk does)."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:  # the error that brought us here is the one to report
        log.exception("rolling back a failed write failed")


@dataclass(eq=False)
class _Reader:
    """A thread's reader connection and how many reads are using it now."""

    conn: sqlite3.Connection
    users: int = 0


def _closed_error() -> sqlite3.ProgrammingError:
    return sqlite3.ProgrammingError("Cannot operate on a closed database.")  # the driver's own words


class Connections:
    """The writer and per-thread readers of one database file."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL", busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = path
        self._synchronous = synchronous
        self._busy_timeout = busy_timeout
        self._writer = _connect(path, synchronous, busy_timeout)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[_Reader] = []
        # Guards the list, each reader's users and _closed. Reentrant: a reading() generator the garbage
        # collector finalises may end its read on a thread that holds the lock already.
        self._readers_lock = threading.RLock()
        self._closed = False

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one ``BEGIN IMMEDIATE`` transaction; roll back on any error."""
        with self._write_lock, translated():
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                _roll_back(conn)
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """Run a block of reads on this thread's reader connection (not closed until the block ends)."""
        with translated():
            reader = self._reader()
            try:
                yield reader.conn
            finally:
                with self._readers_lock:
                    reader.users -= 1
                    if self._closed and reader.users == 0:
                        reader.conn.close()  # close() found it in use: the last read closes it

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Return the first row of a read, or None."""
        with self.reading() as conn:
            return conn.execute(sql, params).fetchone()

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Return every row of a read."""
        with self.reading() as conn:
            return conn.execute(sql, params).fetchall()

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it to nothing (old frames hold old text)."""
        with self._write_lock, translated():
            busy = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if busy:
                log.warning("the WAL checkpoint of %s was blocked by a reader; it stays until the next one", self.path)

    def _reader(self) -> _Reader:
        """This thread's reader, counted as in use (the caller counts it out)."""
        reader: _Reader | None = getattr(self._local, "reader", None)
        if self._closed:  # before connecting: a connection would create the file again if it was deleted
            raise _closed_error()
        fresh = _connect(self.path, self._synchronous, self._busy_timeout) if reader is None else None
        with self._readers_lock:
            if self._closed:
                if fresh is not None:
                    fresh.close()
                raise _closed_error()
            if fresh is not None:
                reader = self._local.reader = _Reader(fresh)
                self._readers.append(reader)
            assert reader is not None
            reader.users += 1
        return reader

    def close(self) -> None:
        """Close every connection of this file.

        The writer is closed once its write ends; a reader now, or, when a read is using it, as that
        read ends."""
        with translated():
            with self._readers_lock:
                self._closed = True
                for reader in self._readers:
                    if reader.users == 0:
                        reader.conn.close()
                self._readers.clear()
            with self._write_lock:
                self._writer.close()
