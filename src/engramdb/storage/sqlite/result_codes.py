"""SQLite errors to EngramDB errors, by extended result code (never by message)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from engramdb.errors import EngramError
from engramdb.storage.failures import Failure, storage_error

_DUPLICATE = {sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_ROWID}
# Primary codes (the low byte of an extended code): lock contention, a file that cannot be
# opened, and exhausted disk or memory pass without a code change; retrying is the answer.
_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_PROTOCOL,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_NOMEM,
}


def classify(error: sqlite3.Error) -> Failure:
    """Return the failure a driver error is (errors raised outside the library have no code)."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return "other"
    if code in _DUPLICATE:
        return "duplicate"
    if code & 0xFF in _UNAVAILABLE:
        return "unavailable"
    return "other"


def translate(error: sqlite3.Error) -> EngramError:
    """Return our error for a driver error; raise it ``from`` the driver's."""
    return storage_error(classify(error))


@contextmanager
def translated() -> Iterator[None]:
    """Run a block whose SQLite errors leave it as EngramDB errors, chained to the original."""
    try:
        yield
    except sqlite3.Error as error:
        raise translate(error) from error
