"""Closing a store and opening it again, as another process (or a later version) would."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore

if TYPE_CHECKING:
    from engramdb.storage.postgres.store import PostgresStore


def as_postgres(store: Store) -> PostgresStore:
    """The store, a PostgresStore wherever it is not a SQLiteStore (the tests' two backends)."""
    from engramdb.storage.postgres.store import PostgresStore

    assert isinstance(store, PostgresStore), store
    return store


def store_spec(store: Store) -> tuple[str, ...]:
    """What it takes to open the same store again: its folder, or its URL and schema."""
    if isinstance(store, SQLiteStore):
        return ("sqlite", str(store.home))
    pg = as_postgres(store)
    return ("postgres", pg.url, pg.schema)


def open_store(spec: tuple[str, ...]) -> Store:
    if spec[0] == "sqlite":
        return SQLiteStore(Path(spec[1]))
    from engramdb.storage.postgres.store import PostgresStore

    return PostgresStore(spec[1], schema=spec[2])
