"""engram export -> engram import moves a SQLite tenant to PostgreSQL with everything intact."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import audit, auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import LinkRequest, RecordChange, RecordSearch, RecordWrite
from engramdb.models.lifecycle import RetractRequest
from engramdb.models.memories import FactQuery
from engramdb.models.recall import RecallRequest
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.sqlite.store import SQLiteStore
from tests.cli import engram
from tests.factories import episode_body, fact_body, scope_fields

pytestmark = pytest.mark.postgres
SCOPE = scope_fields()
OP = Caller("acme", "op", "admin")


def _engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return engram(*args, env={**os.environ, **env})


def _seed(home: Path) -> None:
    store = SQLiteStore(home)
    service = MemoryService(store, HashingEmbedder(), Settings(home=home, embedder="hashing"))
    store.tenant("acme", create=True)
    for i in range(20):
        episode = episode_body(f"turn {i} about rust crates", turn=i, scope=SCOPE)
        service.writes.write_episode(OP, EpisodeWrite.model_validate(episode))
    mongo = fact_body("Uses MongoDB", kind="db", sourceEventId="a", scope=SCOPE, validFrom="2026-01-01T00:00:00Z")
    service.writes.write_fact(OP, FactWrite.model_validate(mongo))
    postgres = fact_body("Uses PostgreSQL", kind="db", sourceEventId="b", scope=SCOPE, validFrom="2026-02-01T00:00:00Z")
    current = service.writes.write_fact(OP, FactWrite.model_validate(postgres))
    wrong = service.writes.write_fact(
        OP, FactWrite.model_validate(fact_body("Deploys on Friday", kind="deploy", scope=SCOPE))
    )
    service.writes.retract_fact(OP, wrong.id, RetractRequest.model_validate({"reason": "never", "scope": SCOPE}))
    auth.create_key(store, tenant="acme", role="agent", grant=SCOPE)
    service.shared.participant_hash(OP, "alice")  # makes the tenant's participant salt
    _seed_knowledge(service, current.id)
    drain(store.tenant("acme"), service.shared.embedder)
    assert current.outcome == "superseded"
    store.close()


def _seed_knowledge(service: MemoryService, fact_id: str) -> None:
    session = {"title": "Database choice", "DECISION": [{"title": "Move to PostgreSQL for the ledger service"}]}
    written = service.record_writes.write_records(
        OP, RecordWrite.model_validate({"label": "SESSION", "data": session, "mergeBy": ["title"], "scope": SCOPE})
    )
    service.record_writes.update_record(
        OP, written.records[0].id, RecordChange.model_validate({"properties": {"mood": "settled"}, "scope": SCOPE})
    )
    dana = service.record_writes.write_records(
        OP, RecordWrite.model_validate({"label": "ENTITY", "data": {"name": "Dana"}, "scope": SCOPE})
    ).records[0]
    mention = {"source": {"id": fact_id, "kind": "MEMORY_FACT"}, "target": dana.id, "type": "MENTIONS", "scope": SCOPE}
    service.record_writes.link_records(OP, LinkRequest.model_validate(mention))
    episode = service.writes.write_episode(
        OP, EpisodeWrite.model_validate(episode_body("We chose PostgreSQL", scope=SCOPE))
    )
    derived = fact_body("The ledger runs on PostgreSQL", kind="ledger-db", sourceEventId=episode.id, scope=SCOPE)
    service.writes.write_fact(OP, FactWrite.model_validate(derived))  # DERIVED_FROM its episode


def test_sqlite_to_postgres_round_trip_keeps_every_row_and_the_audit_chain(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    _seed(home)
    dump = tmp_path / "acme.jsonl"
    sqlite_env = {"ENGRAM_HOME": str(home)}
    exported = _engram(sqlite_env, "export", "--tenant", "acme", "--out", str(dump))
    assert exported.returncode == 0, exported.stderr
    schema = f"imp_{uuid.uuid4().hex[:8]}"
    # A home of its own: a PostgreSQL tenant's audit anchors are kept there (else in ./.engram).
    pg_home = tmp_path / "pg-home"
    pg_env = {"ENGRAM_DATABASE_URL": pg_url, "ENGRAM_PG_SCHEMA": schema, "ENGRAM_HOME": str(pg_home)}
    imported = _engram(pg_env, "import", "--in", str(dump))
    assert imported.returncode == 0, imported.stderr
    verified = _engram(pg_env, "audit", "verify", "--tenant", "acme")
    assert verified.returncode == 0 and "verified" in verified.stdout, verified.stderr
    again = _engram(pg_env, "import", "--in", str(dump))
    assert again.returncode == 1 and "not empty" in again.stderr

    sqlite, pg = SQLiteStore(home), PostgresStore(pg_url, schema=schema)
    try:
        src, dst = sqlite.tenant("acme"), pg.tenant("acme")
        assert list(src.export_rows()) == list(dst.export_rows())  # every row, byte for byte
        assert audit.verify(dst).ok and audit.verify(dst).checked == audit.verify(src).checked
        assert dst.embedding_counts() == src.embedding_counts() == {"pending": 0, "ready": 25, "failed": 0}
        service = MemoryService(pg, HashingEmbedder(), Settings(home=pg_home, embedder="hashing"))
        before = MemoryService(sqlite, HashingEmbedder(), Settings(embedder="hashing")).shared.participant_hash(
            OP, "alice"
        )
        assert service.shared.participant_hash(OP, "alice") == before  # the salt came along: users find their memories
        found = service.reads.recall(OP, RecallRequest.model_validate({"query": "which database", "scope": SCOPE}))
        assert "Uses PostgreSQL" in [m.text for m in found.memories]
        assert "Uses MongoDB" not in [m.text for m in found.memories]
        # The knowledge plane came along: records, their history, relationships to memories, vectors.
        tasks = service.record_reads.search_records(
            OP,
            RecordSearch.model_validate(
                {
                    "labels": ["DECISION"],
                    "where": {"SESSION": {"title": "Database choice"}},
                    "scope": SCOPE,
                    "query": "ledger database",
                }
            ),
        )
        assert [r.properties["title"] for r in tasks.records] == ["Move to PostgreSQL for the ledger service"]
        assert tasks.records[0].score is not None  # its text's vector was imported
        kinds = Counter(table for table, _ in dst.export_rows())
        assert kinds["records"] == 3 and kinds["record_history"] == 1 and kinds["relationships"] == 3
        with pytest.raises(Exception, match="retired"):  # the tombstone came along
            retired = fact_body("uses mongodb", kind="db", sourceEventId="c", scope=SCOPE)
            service.writes.write_fact(OP, FactWrite.model_validate(retired))
    finally:
        sqlite.close()
        pg.close()


def test_an_export_from_before_invalid_at_imports_with_each_closure_filled(tmp_path: Path, pg_url: str) -> None:
    """Exports made before ``invalid_at`` existed lack it: both importers fill it from successors."""
    import json

    home = tmp_path / "home"
    _seed(home)
    dump = tmp_path / "acme.jsonl"
    assert _engram({"ENGRAM_HOME": str(home)}, "export", "--tenant", "acme", "--out", str(dump)).returncode == 0
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    for line in lines:
        if line.get("table") == "memories":
            assert line["row"].pop("invalid_at", None) is not None or line["row"]["text"] != "Uses MongoDB"
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(line) + "\n" for line in lines))
    schema = f"old_{uuid.uuid4().hex[:8]}"
    targets = {
        "sqlite": {"ENGRAM_HOME": str(tmp_path / "copy")},
        "postgres": {"ENGRAM_DATABASE_URL": pg_url, "ENGRAM_PG_SCHEMA": schema, "ENGRAM_HOME": str(tmp_path / "pg")},
    }
    for name, env in targets.items():
        imported = _engram(env, "import", "--in", str(old))
        assert imported.returncode == 0, (name, imported.stderr)
        store = SQLiteStore(tmp_path / "copy") if name == "sqlite" else PostgresStore(pg_url, schema=schema)
        try:
            service = MemoryService(store, HashingEmbedder(), Settings(home=tmp_path / name, embedder="hashing"))
            held = service.reads.list_facts(
                OP, FactQuery.model_validate({**SCOPE, "kind": "db", "validAt": "2026-01-15T00:00:00Z"})
            )
            later = service.reads.list_facts(
                OP, FactQuery.model_validate({**SCOPE, "kind": "db", "validAt": "2026-03-01T00:00:00Z"})
            )
            assert [f.event["text"] for f in held.facts] == ["Uses MongoDB"], name
            assert [f.event["text"] for f in later.facts] == ["Uses PostgreSQL"], name  # MongoDB closed
        finally:
            store.close()
