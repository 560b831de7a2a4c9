"""What the parts of a PostgreSQL tenant store use of it: its name and its connections."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import psycopg

from engramdb.storage.postgres.transaction import PostgresTransaction


class TenantAccess(Protocol):
    """The tenant store as its parts see it (``PostgresTenantStore`` is one)."""

    name: str

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def _conn(self) -> AbstractContextManager[psycopg.Connection]: ...

    def transaction(self) -> AbstractContextManager[PostgresTransaction]: ...
