"""On PostgreSQL, what recall scans stays in the heap row and the bulky rest moves to TOAST
(migration 003): a scan of a scope reads one page per row, not a TOAST probe per vector."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.storage.postgres import migrations
from engramdb.storage.postgres.store import PostgresStore
from tests.factories import episode_body, scope_fields

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_url, schema=f"layout_{uuid.uuid4().hex[:10]}")
    yield store
    store.close()


def test_vectors_and_text_index_stay_inline(pg: PostgresStore) -> None:
    embedder = HashingEmbedder(384)  # the default model's width
    service = MemoryService(pg, embedder, Settings(embedder="hashing:384"))
    pg.tenant("t1", create=True)
    body = episode_body("the deploy moved to kafka " * 20, "noted " * 30, session="s", turn=0, scope=scope_fields())
    service.writes.write_episode(Caller("t1", "op", "admin"), EpisodeWrite.model_validate(body))
    assert drain(pg.tenant("t1"), embedder) == 1
    with psycopg.connect(pg.url, autocommit=True) as conn:
        storage: dict[str, str] = dict(
            conn.execute(
                "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attname IN ('embedding', 'tsv', 'event_json')",
                (f"{pg.schema}.memories",),
            ).fetchall()
        )
        assert storage == {"embedding": "m", "tsv": "m", "event_json": "x"}
        row = conn.execute(
            "SELECT pg_column_toast_chunk_id(embedding) IS NULL, pg_column_toast_chunk_id(event_json) IS NOT NULL "
            f"FROM {pg.schema}.memories WHERE embedding IS NOT NULL"
        ).fetchone()
    assert row is not None  # the episode embedded above
    inline, event_out_of_line = row
    assert inline  # the vector is read with its row
    assert event_out_of_line  # positive control: this row was large enough to be toasted


def test_every_migration_file_is_applied(pg: PostgresStore) -> None:
    # One was not: 012_memories_by_id.sql sat in the folder while the hand-kept list skipped it.
    files = sorted(p.name for p in (Path(migrations.__file__).parent).glob("*.sql"))
    assert "012_memories_by_id.sql" in files and len(files) >= 13  # the listing found the folder
    pg.tenant("t1", create=True)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        applied = [r[0] for r in conn.execute(f"SELECT name FROM {pg.schema}.schema_migrations ORDER BY name")]
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (pg.schema,))}
    assert applied == files
    assert any("memory_id" in name or "by_id" in name for name in indexes), indexes  # 012's index exists
