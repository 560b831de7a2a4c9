"""Every PostgreSQL statement runs under a statement timeout (issue 30).

A pooled connection starts with the request timeout (a session setting made once, when the pool
opens it): a statement past it is cancelled by the server (SQLSTATE 57014, ``QueryTimeoutError``:
503 with Retry-After), its transaction rolls back and the connection goes back to the pool at
once. Maintenance work marks itself (``tenant.aging.maintenance()``: re-embedding, the aging sweep;
imports, exports, bulk loads, warming the scope copies) and each of its transactions sets the
maintenance timeout for itself alone (``SET LOCAL``: a transaction's end takes it back, so no
connection returns to the pool with it). Connections of their own (migrations, VACUUM) set the
maintenance timeout for their session. Neither is tied to prepared statements: psycopg prepares
a statement on a connection, the timeout applies to each execution of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import psycopg

REQUEST_SECONDS = 5.0
MAINTENANCE_SECONDS = 3600.0

_maintenance: ContextVar[bool] = ContextVar("engram-maintenance", default=False)


@dataclass(frozen=True)
class StatementTimeouts:
    """How long one statement may run: a request's, and maintenance work's (seconds)."""

    request: float = REQUEST_SECONDS
    maintenance: float = MAINTENANCE_SECONDS

    def current(self) -> str:
        """The timeout of a transaction begun now, as PostgreSQL's setting (milliseconds)."""
        return _milliseconds(self.maintenance if _maintenance.get() else self.request)

    def set_for_session(self, conn: psycopg.Connection, *, maintenance: bool = False) -> None:
        """Give a connection its timeout until it closes (the pool's request timeout by default)."""
        value = _milliseconds(self.maintenance if maintenance else self.request)
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (value,))

    def is_maintenance(self) -> bool:
        return _maintenance.get()


@contextmanager
def maintenance() -> Iterator[None]:
    """Run a block as maintenance work: its transactions get the maintenance timeout."""
    token = _maintenance.set(True)
    try:
        yield
    finally:
        _maintenance.reset(token)


def _milliseconds(seconds: float) -> str:
    return str(max(1, round(seconds * 1000)))
