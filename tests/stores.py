"""Closing a store and opening it again, as another process (or a later version) would."""

from __future__ import annotations

from pathlib import Path

from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore


def store_spec(store: Store) -> tuple[str, ...]:
    """What it takes to open the same store again: its folder, or its URL and schema."""
    if isinstance(store, SQLiteStore):
        return ("sqlite", str(store.home))
    return ("postgres", store.url, store.schema)  # type: ignore[attr-defined]


def open_store(spec: tuple[str, ...]) -> Store:
    if spec[0] == "sqlite":
        return SQLiteStore(Path(spec[1]))
    from engramdb.storage.postgres.store import PostgresStore

    return PostgresStore(spec[1], schema=spec[2])
