"""The SQLite store: idempotence under concurrency, embedding states, audit, cross-process reads."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from typing import Any

import numpy as np
import pytest

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import EmbeddingWorker, drain, embed_batch
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import CandidateFilter, Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, fact_body, scope_fields
from tests.stores import as_postgres, open_store, store_spec

SCOPE = scope_fields()
EVENTS = [episode_body(f"event number {i} about topic {i % 17}", f"ack {i}", turn=i, scope=SCOPE) for i in range(500)]


def _deliver_all(spec: tuple[str, ...], worker: int, start: Any) -> int:
    """Deliver every event once, from a fresh process with its own store and connections."""
    store = open_store(spec)
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    caller = Caller(tenant="t1", key_id=f"worker-{worker}", role="admin")
    start.wait()
    created = 0
    order = EVENTS if worker % 2 else list(reversed(EVENTS))
    for body in order:
        created += service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).created
    store.close()
    return created


def test_eight_processes_delivering_the_same_500_events_leave_500_rows(store: Store) -> None:
    tenant = store.tenant("t1", create=True)
    # A fork server imports this module once and forks each process from it: eight processes of their
    # own (each opens its store, as _deliver_all says), without eight imports of the suite's modules.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    with ctx.Manager() as manager:
        start = manager.Event()
        with ctx.Pool(8) as pool:
            results = [pool.apply_async(_deliver_all, (store_spec(store), w, start)) for w in range(8)]
            start.set()
            created = [r.get(timeout=240) for r in results]
    assert sum(created) == 500  # exactly one delivery of each event created it
    assert sum(tenant.embedding_counts().values()) == 500
    writes = [e for e in tenant.audit_entries(0, 10_000) if e.action == "episode.write"]
    assert len(writes) == 500 and len({e.target_id for e in writes}) == 500
    lexical = tenant.text_candidates(auth.scope_key(Scope.model_validate(SCOPE)), ["event"], CandidateFilter(), 1000)
    assert len(lexical) == 500  # every row indexed once


def test_eight_threads_through_one_store(service: MemoryService, operator: Caller) -> None:
    bodies = [EpisodeWrite.model_validate(b) for b in EVENTS[:200]]
    created: list[int] = []

    def deliver() -> None:
        created.append(sum(service.writes.write_episode(operator, b).created for b in bodies))

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(created) == 200
    assert service.shared.store.tenant("t1").embedding_counts()["pending"] == 200
    assert service.shared.store.tenant("t1").embedding_backlog() == 200  # the cheap count agrees


def test_same_event_id_in_two_participant_scopes_is_two_rows(service: MemoryService, operator: Caller) -> None:
    """eventId omits participantScopeHash, so uniqueness must include the scope."""
    alice = service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(scope=SCOPE)))
    bob_scope = scope_fields(participantScopeHash="b" * 64)
    bob = service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(scope=bob_scope)))
    assert alice.id == bob.id and alice.created and bob.created


def _recall(service: MemoryService, operator: Caller, query: str) -> list[str]:
    request = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": 10})
    return [m.text for m in service.reads.recall(operator, request).memories]


def test_memory_is_found_lexically_before_its_vector_is_ready(service: MemoryService, operator: Caller) -> None:
    written = service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body("Quokkas live on Rottnest", scope=SCOPE))
    )
    assert written.memory.embedding.state == "pending"
    assert _recall(service, operator, "quokkas") == ["Quokkas live on Rottnest"]
    hits = service.shared.store.tenant("t1").vector_candidates(
        auth.scope_key(Scope.model_validate(SCOPE)),
        service.shared.embedder.embed(["quokkas"])[0],
        CandidateFilter(),
        10,
    )
    assert hits == []  # no vector yet: the lexical arm alone found it
    drain(service.shared.store.tenant("t1"), service.shared.embedder)
    assert (
        len(
            service.shared.store.tenant("t1").vector_candidates(
                auth.scope_key(Scope.model_validate(SCOPE)),
                service.shared.embedder.embed(["quokkas"])[0],
                CandidateFilter(),
                10,
            )
        )
        == 1
    )


class FlakyEmbedder(HashingEmbedder):
    """Fails while ``broken`` is set, as a down embedding service would."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = True

    def embed(self, texts: Any) -> Any:
        if self.broken:
            raise ConnectionError("embedding service unreachable")
        return super().embed(texts)


def test_failed_embedding_is_recorded_then_retried(service: MemoryService, operator: Caller) -> None:
    written = service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body("Wombats dig burrows", scope=SCOPE))
    )
    tenant = service.shared.store.tenant("t1")
    flaky = FlakyEmbedder()
    assert embed_batch(tenant, flaky, 10) == 1
    record = tenant.get_memory(auth.scope_key(Scope.model_validate(SCOPE)), "MEMORY_FACT", written.id)
    assert record is not None
    assert record.embed_state == "failed"
    assert record.embed_error == "ConnectionError: embedding service unreachable"
    assert record.embed_attempts == 1
    assert _recall(service, operator, "wombats") == ["Wombats dig burrows"]  # still findable
    assert tenant.embedding_jobs(10, "9999-01-01T00:00:00.000000Z")  # due for a retry later
    assert tenant.embedding_jobs(10, "2000-01-01T00:00:00.000000Z") == []  # not before
    flaky.broken = False
    # Make the retry due now instead of in a second (through the store, as a failure would).
    tenant.record_embedding_failure([record.rowid], record.embed_error or "", ["2000-01-01T00:00:00.000000Z"])
    assert drain(tenant, flaky) == 1
    record = tenant.get_memory(auth.scope_key(Scope.model_validate(SCOPE)), "MEMORY_FACT", written.id)
    assert record is not None and record.embed_state == "ready" and record.embed_error is None


def test_worker_embeds_in_the_background(service: MemoryService, operator: Caller) -> None:
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body("Echidnas lay eggs", scope=SCOPE)))
    worker = EmbeddingWorker(service.shared.store, service.shared.embedder, service.shared.written, poll_seconds=0.02)
    worker.start()
    try:
        for _ in range(500):
            if service.shared.store.tenant("t1").embedding_counts()["ready"] == 1:
                break
            threading.Event().wait(0.01)
    finally:
        worker.stop()
    assert service.shared.store.tenant("t1").embedding_counts() == {"pending": 0, "ready": 1, "failed": 0}
    assert service.shared.store.tenant("t1").embedding_backlog() == 0


def test_vector_arm_is_exact_against_brute_force(service: MemoryService, operator: Caller) -> None:
    bodies = [EpisodeWrite.model_validate(b) for b in EVENTS[:300]]
    service.writes.write_episodes(operator, bodies)
    tenant = service.shared.store.tenant("t1")
    drain(tenant, service.shared.embedder)
    key = auth.scope_key(Scope.model_validate(SCOPE))
    texts = {r.rowid: r.text for r in tenant.records(list(range(1, 301))).values()}
    matrix = service.shared.embedder.embed(list(texts.values()))
    for query in ["topic 3", "event number 42", "ack 7 topic 11"]:
        q = service.shared.embedder.embed([query])[0]
        exact = dict(zip(texts, (matrix @ q).tolist(), strict=True))
        best = sorted(exact.values(), reverse=True)[:10]
        got = tenant.vector_candidates(key, q, CandidateFilter(), 10)
        # Same scores as brute force, in order (ties may pick either row of equal score).
        assert np.allclose([c.score for c in got], best, atol=1e-5)
        assert np.allclose([exact[c.rowid] for c in got], best, atol=1e-5)


def test_exclude_session_and_sources_filter_both_arms(service: MemoryService, operator: Caller) -> None:
    for text, session in (("platypus facts", "s1"), ("platypus again", "s2")):
        service.writes.write_episode(
            operator, EpisodeWrite.model_validate(episode_body(text, session=session, scope=SCOPE))
        )
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body("platypus fact", scope=SCOPE)))
    drain(service.shared.store.tenant("t1"), service.shared.embedder)

    def texts(**extra: Any) -> set[str]:
        request = RecallRequest.model_validate({"query": "platypus", "scope": SCOPE, **extra})
        return {m.text.split("\n")[0] for m in service.reads.recall(operator, request).memories}

    assert texts() == {"platypus facts", "platypus again", "platypus fact"}
    assert texts(excludeSessionId="s1") == {"platypus again", "platypus fact"}
    assert texts(sources=["MEMORY_FACT"]) == {"platypus fact"}


def test_writes_are_audited_in_a_chain(service: MemoryService, operator: Caller) -> None:
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body(scope=SCOPE)))
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body(scope=SCOPE)))  # no-op
    service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(scope=SCOPE)))
    entries = service.shared.store.tenant("t1").audit_entries(0, 100)
    assert [e.action for e in entries] == ["fact.write", "episode.write"]
    assert entries[1].prev_hash == entries[0].hash
    assert entries[0].actor_key_id == "test-operator"
    for statement in ("UPDATE audit_log SET reason = 'edited'", "DELETE FROM audit_log"):
        with pytest.raises(Exception, match="append-only"):
            _raw(service.shared.store, statement)
    assert len(service.shared.store.tenant("t1").audit_entries(0, 100)) == 2  # untouched


def _raw(store: Store, statement: str) -> None:
    """Run SQL straight on the database, outside EngramDB (as another client of the file would)."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute(statement)
        return
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(f"SET search_path TO {store.schema}")  # type: ignore[attr-defined]
        conn.execute(statement)


def test_a_second_process_sees_writes_of_the_first(
    settings: Settings, operator: Caller, service: MemoryService
) -> None:
    """Rows another store instance writes are searched (SQLite: the vector copy refreshes)."""
    before = _recall(service, operator, "kangaroo")
    other = open_store(store_spec(service.shared.store))
    try:
        writer = MemoryService(other, HashingEmbedder(), settings)
        writer.writes.write_fact(operator, FactWrite.model_validate(fact_body("A kangaroo boxed", scope=SCOPE)))
        drain(other.tenant("t1"), writer.shared.embedder)
    finally:
        other.close()
    after = service.shared.store.tenant("t1").vector_candidates(
        auth.scope_key(Scope.model_validate(SCOPE)),
        service.shared.embedder.embed(["A kangaroo boxed"])[0],
        CandidateFilter(),
        5,
    )
    assert before == [] and len(after) == 1
    assert _recall(service, operator, "kangaroo") == ["A kangaroo boxed"]


def test_a_file_from_before_the_in_memory_index_loses_its_fts5_table(settings: Settings) -> None:
    """Opening a SQLite tenant file that still has the FTS5 table drops it, keeping every memory."""
    caller = Caller(tenant="t1", key_id="test-operator", role="admin")
    store = SQLiteStore(settings.home)
    path = store.tenant("t1", create=True).path
    service = MemoryService(store, HashingEmbedder(), settings)
    service.writes.write_fact(caller, FactWrite.model_validate(fact_body("A wombat dug a burrow", scope=SCOPE)))
    store.close()
    with sqlite3.connect(path) as conn:  # what an earlier version's schema had
        conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(scope, body)")
    reopened = SQLiteStore(settings.home)
    try:
        again = MemoryService(reopened, HashingEmbedder(), settings)
        assert _recall(again, caller, "wombat") == ["A wombat dug a burrow"]
        with sqlite3.connect(path) as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "memories" in names and "memories_fts" not in names
    finally:
        reopened.close()


def _forget_invalid_at(store: Store) -> None:
    """Make the store look like one from before ``invalid_at`` (migration 004 / the SQLite upgrade)."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute("DROP INDEX memories_slot_ends")  # an index on invalid_at, made since
            conn.execute("ALTER TABLE memories DROP COLUMN invalid_at")
        return
    import psycopg

    pg = as_postgres(store)
    schema = pg.schema
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.memories DROP COLUMN invalid_at")
        conn.execute(f"DELETE FROM {schema}.schema_migrations WHERE name = '004_invalid_at.sql'")


def test_a_store_from_before_invalid_at_learns_where_superseded_facts_stopped(store: Store) -> None:
    """Upgrading closes each superseded fact's valid window at its successor's validFrom."""
    _forget_invalid_at_after_a_supersession(store)


def _forget_invalid_at_after_a_supersession(store: Store) -> None:
    caller = Caller(tenant="t1", key_id="test-operator", role="admin")
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    store.tenant("t1", create=True)
    old = service.writes.write_fact(
        caller,
        FactWrite.model_validate(
            fact_body("Uses vim", kind="editor", sourceEventId="a", validFrom="2026-01-01T00:00:00Z", scope=SCOPE)
        ),
    )
    new = service.writes.write_fact(
        caller,
        FactWrite.model_validate(
            fact_body("Uses emacs", kind="editor", sourceEventId="b", validFrom="2026-02-01T00:00:00Z", scope=SCOPE)
        ),
    )
    spec = store_spec(store)
    _forget_invalid_at(store)
    store.close()
    reopened = open_store(spec)
    try:
        key = auth.scope_key(Scope.model_validate(SCOPE))
        upgraded = reopened.tenant("t1").get_memory(key, "MEMORY_FACT", old.id)
        current = reopened.tenant("t1").get_memory(key, "MEMORY_FACT", new.id)
        assert upgraded is not None and upgraded.status == "superseded"
        assert upgraded.invalid_at is not None and upgraded.invalid_at.startswith("2026-02-01T00:00:00")
        assert upgraded.invalid_at == new.memory.valid_from
        assert current is not None and current.invalid_at is None  # the current fact still holds
    finally:
        reopened.close()


@pytest.mark.postgres
def test_migration_004_fills_invalid_at_when_the_owner_is_not_a_superuser(pg_url: str) -> None:
    """Row-level security is forced on memories: an owner without BYPASSRLS sees no row unless
    the migration lifts it (the test server's own user is a superuser, which hides this)."""
    import uuid

    import psycopg
    from psycopg.conninfo import make_conninfo

    from engramdb.storage.postgres.store import PostgresStore

    role, schema = f"owner_{uuid.uuid4().hex[:8]}", f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN CREATEROLE PASSWORD 'pw'")
        conn.execute(f"GRANT CREATE ON DATABASE {conn.info.dbname} TO {role}")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a superuser's job, as in production
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'engram_app'").fetchone():  # made by an earlier test
            conn.execute(f"GRANT engram_app TO {role} WITH ADMIN OPTION")
    owner_url = make_conninfo(pg_url, user=role, password="pw")
    store = PostgresStore(owner_url, schema=schema)
    with psycopg.connect(owner_url) as conn:
        privileged = "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
        row = conn.execute(privileged).fetchone()
        assert row is not None and not row[0]
    _forget_invalid_at_after_a_supersession(store)


def test_a_valid_window_only_ever_narrows(service: MemoryService, operator: Caller) -> None:
    """set_status keeps the earlier of the stored and the given invalid_at, on both backends."""
    written = service.writes.write_fact(
        operator,
        FactWrite.model_validate(fact_body("Uses vim", kind="editor", validFrom="2026-01-01T00:00:00Z", scope=SCOPE)),
    )
    key = auth.scope_key(Scope.model_validate(SCOPE))
    stored = service.shared.store.tenant("t1").get_memory(key, "MEMORY_FACT", written.id)
    assert stored is not None
    rowid = stored.rowid
    ends = []
    for given in ("2026-03-01T00:00:00.000000Z", "2026-06-01T00:00:00.000000Z", None, "2026-02-01T00:00:00.000000Z"):
        with service.shared.store.tenant("t1").transaction() as tx:
            ends.append(tx.set_status(rowid, status="superseded", reason="r", invalid_at=given).invalid_at)
    assert ends == [
        "2026-03-01T00:00:00.000000Z",
        "2026-03-01T00:00:00.000000Z",
        "2026-03-01T00:00:00.000000Z",
        "2026-02-01T00:00:00.000000Z",
    ]
