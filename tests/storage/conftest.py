"""Fixtures of the storage tests: stores of either backend opened with chosen options."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.pg_schemas import SchemaPool
from tests.stores import as_postgres

OpenStore = Callable[..., Store]


@pytest.fixture
def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[OpenStore]:
    """Open stores of ``backend`` with the given options (each its own folder, or an empty schema of
    the pool: tests/pg_schemas.py)."""
    opened: list[Store] = []
    pool: SchemaPool | None = request.getfixturevalue("schema_pool") if backend == "postgres" else None

    def make(**options: Any) -> Store:
        if pool is None:
            options.pop("copy_min_rows", None)
            store: Store = SQLiteStore(tmp_path / uuid.uuid4().hex[:8], **options)
        else:
            store = pool.open(**options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
        if pool is not None:
            pool.give_back(as_postgres(store).schema)
