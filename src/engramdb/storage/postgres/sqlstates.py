"""PostgreSQL errors to EngramDB errors, by SQLSTATE (never by message)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from engramdb.errors import EngramError
from engramdb.storage.failures import Failure, storage_error

_DUPLICATE = {"23505"}  # unique_violation (primary keys included)
_TIMED_OUT = {"57014"}  # query_canceled: the statement timeout (storage/postgres/timeouts.py) fired
_UNAVAILABLE = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
_UNAVAILABLE_CLASSES = {"08", "53", "57"}  # connection, insufficient resources, operator intervention


def classify(error: psycopg.Error) -> Failure:
    """Return the failure a driver error is."""
    state = error.sqlstate
    if state is None:
        # No answer from a server: refused, closed, or no pooled connection in time.
        return "unavailable" if isinstance(error, psycopg.OperationalError) else "other"
    if state in _DUPLICATE:
        return "duplicate"
    if state in _TIMED_OUT:
        return "timeout"
    if state in _UNAVAILABLE or state[:2] in _UNAVAILABLE_CLASSES:
        return "unavailable"
    return "other"


def translate(error: psycopg.Error) -> EngramError:
    """Return our error for a driver error; raise it ``from`` the driver's."""
    return storage_error(classify(error))


@contextmanager
def translated() -> Iterator[None]:
    """Run a block whose psycopg errors leave it as EngramDB errors, chained to the original."""
    try:
        yield
    except psycopg.Error as error:
        raise translate(error) from error
