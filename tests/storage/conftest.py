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

OpenStore = Callable[..., Store]


@pytest.fixture
def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[OpenStore]:
    """Open stores of ``backend`` with the given options (each its own folder, or an empty schema of
    the pool: tests/pg_schemas.py)."""
    opened: list[Store] = []
    schemas: list[str] = []

    def make(**options: Any) -> Store:
        if backend == "sqlite":
            options.pop("copy_min_rows", None)
            store: Store = SQLiteStore(tmp_path / uuid.uuid4().hex[:8], **options)
        else:
            from engramdb.storage.postgres.store import PostgresStore

            pool: SchemaPool = request.getfixturevalue("schema_pool")
            schema, fresh = pool.take()
            store = PostgresStore(request.getfixturevalue("pg_url"), schema=schema, **options)
            if fresh:
                pool.learn(schema)
            schemas.append(schema)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
    for schema in schemas:
        request.getfixturevalue("schema_pool").give_back(schema)
