"""Driver errors to EngramDB errors, by SQLSTATE (never by message)."""

from __future__ import annotations

import psycopg

from engramdb.errors import BackendUnavailableError, ConflictError, EngramError

_UNAVAILABLE_CLASSES = ("08", "53", "57")  # connection, resources, operator intervention
_RETRY = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available


def translate(error: psycopg.Error) -> EngramError:
    """Return our error for a driver error."""
    state = getattr(error, "sqlstate", None) or ""
    if state in _RETRY or state[:2] in _UNAVAILABLE_CLASSES or isinstance(error, psycopg.OperationalError):
        return BackendUnavailableError("the database is busy or unreachable; retry", sqlstate=state)
    if state == "23505":
        return ConflictError("a row with this identity already exists", sqlstate=state)
    return EngramError(f"storage error: {error}", sqlstate=state)
