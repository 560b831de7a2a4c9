"""Freshening: between recalls a server takes committed writes into the scopes' in-memory copies
(``Store.freshen``), so the recall after a write does not; the copies answer as a copy built from
nothing would, the recency order is kept, and the server's job stands aside while a recall runs.
Both backends, real files and a real PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.aging.usage import UsageBuffer
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.jobs.supervisor import server_jobs
from engramdb.storage.port import CandidateFilter, Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, participant, scope_fields
from tests.storage.conftest import OpenStore
from tests.storage.test_large_scopes import DIM, _fill, _queries


def _write(store: Store, texts: list[str], who: str = "alice") -> None:
    service = MemoryService(store, HashingEmbedder(DIM), Settings(embedder=f"hashing:{DIM}"))
    scope = scope_fields(participantScopeHash=participant(who))
    bodies = [
        EpisodeWrite.model_validate(episode_body(text, "", session="later", turn=i, scope=scope))
        for i, text in enumerate(texts)
    ]
    service.writes.write_episodes(Caller("t1", "test", "admin"), bodies)


def _rows(store: Store) -> list[int]:
    return [rows for _, rows in store.scope_copies.held()]  # type: ignore[attr-defined]


def test_freshen_takes_writes_in_before_the_next_recall(open_store: OpenStore) -> None:
    store = open_store(copy_min_rows=1)  # PostgreSQL: the scope is answered from its copy
    key, _, _ = _fill(store)
    store.tenant("t1").vector_candidates(key, _queries(n=1)[0], CandidateFilter(), 5)  # read: copied
    before = _rows(store)
    assert before == [600] and store.freshen() == 0  # nothing new: nothing done
    _write(store, ["kafka lisbon later one", "kafka lisbon later two"])
    assert _rows(store) == before  # the write alone does not touch the copy
    assert store.freshen(stop=lambda: True) == 0 and _rows(store) == before  # asked to stop: nothing
    assert store.freshen() == 1 and _rows(store) == [602]
    assert store.freshen() == 0  # taken in once
    # The freshened copy answers as a copy built from nothing does.
    query, terms = _queries(n=1)[0], ["kafka", "lisbon", "later"]
    freshened = store.tenant("t1").candidates(key, query, terms, CandidateFilter(), 20)
    store.scope_copies.clear()  # type: ignore[attr-defined]
    rebuilt = store.tenant("t1").candidates(key, query, terms, CandidateFilter(), 20)
    assert freshened == rebuilt and any(c.score > 0 for c in freshened[1])


def test_freshen_keeps_the_recency_order(open_store: OpenStore) -> None:
    store = open_store(copy_min_rows=1)
    first, _, _ = _fill(store)
    second, _, _ = _fill(store, seed=4, participant="bob")
    tenant, query = store.tenant("t1"), _queries(n=1)[0]
    tenant.vector_candidates(first, query, CandidateFilter(), 5)
    tenant.vector_candidates(second, query, CandidateFilter(), 5)  # bob's scope: the most recent
    order = [key for key, _ in store.scope_copies.held()]  # type: ignore[attr-defined]
    assert order[0].endswith(second)
    _write(store, ["alice writes again"], who="alice")
    assert store.freshen() == 1
    assert [key for key, _ in store.scope_copies.held()] == order  # type: ignore[attr-defined]
    assert sorted(_rows(store)) == [600, 601]


def test_the_servers_copies_job_stands_aside_while_a_recall_runs(open_store: OpenStore) -> None:
    store = open_store(copy_min_rows=1)
    key, _, _ = _fill(store)
    store.tenant("t1").vector_candidates(key, _queries(n=1)[0], CandidateFilter(), 5)  # read: copied
    recalling = [True]
    [copies] = [
        job
        for job in server_jobs(
            store, UsageBuffer(), aging_seconds=3600, usage_seconds=5, recalling=lambda: recalling[0]
        )
        if job.name == "copies"
    ]
    _write(store, ["written while a recall runs"])
    assert copies.run(datetime.now()) == {"scopes": 0} and _rows(store) == [600]
    recalling[0] = False  # control: the recall is over
    assert copies.run(datetime.now()) == {"scopes": 1} and _rows(store) == [601]


def test_a_scope_that_became_searchable_is_loaded_before_its_first_recall(tmp_path: Path) -> None:
    # SQLite, the embedded default: its embedding worker tells its own cache which scopes it made searchable.
    store = SQLiteStore(tmp_path / "home")
    try:
        store.tenant("t1", create=True)
        _write(store, [f"kafka lisbon turn {i}" for i in range(5)])
        assert store.freshen() == 0 and _rows(store) == []  # written, no vector yet: nothing to load
        assert drain(store.tenant("t1"), HashingEmbedder(DIM)) == 5
        assert _rows(store) == []  # the vectors alone load nothing
        assert store.freshen(stop=lambda: True) == 0 and _rows(store) == []  # asked to stop: nothing
        assert store.freshen() == 1 and _rows(store) == [5]  # control: loaded before any recall
        assert store.freshen() == 0  # once
        # The loaded copy answers as the copy a first recall builds.
        [(copy_key, _)] = store.scope_copies.held()
        key = copy_key.rpartition(":")[2]
        query, terms = HashingEmbedder(DIM).embed(["kafka lisbon"])[0], ["kafka", "lisbon"]
        loaded = store.tenant("t1").candidates(key, query, terms, CandidateFilter(), 5)
        store.scope_copies.clear()
        built = store.tenant("t1").candidates(key, query, terms, CandidateFilter(), 5)
        assert loaded == built and len(loaded[0]) == 5 and len(loaded[1]) == 5
    finally:
        store.close()


def test_a_written_scope_is_not_loaded_past_nine_tenths_of_the_memory_limit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "home", memory_mb=0.001)  # a thousand bytes: any copy is more
    try:
        store.tenant("t1", create=True)
        _write(store, ["kafka lisbon one"])
        _write(store, ["kafka lisbon two"], who="bob")
        drain(store.tenant("t1"), HashingEmbedder(DIM))
        assert store.freshen() == 1 and len(_rows(store)) == 1  # the first fills the cache ...
        assert store.freshen() == 0 and len(_rows(store)) == 1  # ... and the next waits for a recall
    finally:
        store.close()
