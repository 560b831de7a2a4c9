"""Large scopes: the in-memory copy's vector arm is exact below ``ann_min_rows`` (int8 codes,
re-ranked at full precision) and approximate above it (k-means lists, measured against exact);
PostgreSQL answers a scope from the copy once it holds ``copy_min_rows`` memories; the copies
held stay under the memory limit. Real SQLite files and a real PostgreSQL, small data."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder, l2_normalize
from engramdb.core.recall import lexical_terms
from engramdb.core.service import MemoryService
from engramdb.storage import vector_index
from engramdb.storage.port import CandidateFilter, Store, TenantStore
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, scope_fields
from tests.factories import participant as participant_hash
from tests.storage.conftest import OpenStore

DIM = 32
ROWS = 600
WORDS = "kafka deploy garden tomatoes lisbon flight dentist budget sister piano".split()


def _fill(
    store: Store, seed: int = 3, participant: str = "alice", rows: int = ROWS
) -> tuple[str, np.ndarray, np.ndarray]:
    """Write ``rows`` episodes in one scope and give them clustered vectors; return the scope key,
    the rowids in write order and their vectors."""
    scope = scope_fields(participantScopeHash=participant_hash(participant))
    service = MemoryService(store, HashingEmbedder(DIM), Settings(embedder=f"hashing:{DIM}"))
    store.tenant("t1", create=True)
    rng = np.random.default_rng(seed)
    bodies = [
        EpisodeWrite.model_validate(
            episode_body(" ".join(rng.choice(WORDS, 4)) + f" note {i}", "", session=f"s{i // 10}", turn=i, scope=scope)
        )
        for i in range(rows)
    ]
    service.writes.write_episodes(Caller("t1", "test", "admin"), bodies)
    tenant = store.tenant("t1")
    jobs = tenant.embedding_jobs(rows, "9999-01-01T00:00:00.000000Z")
    centres = l2_normalize(rng.standard_normal((12, DIM)).astype(np.float32))
    vectors = l2_normalize(
        centres[rng.integers(0, 12, len(jobs))]
        + 0.4 * rng.standard_normal((len(jobs), DIM)).astype(np.float32) / np.sqrt(DIM)
    )
    tenant.save_embeddings([j.rowid for j in jobs], vectors, "test")
    key = auth.scope_key(Scope.model_validate(scope))
    # PostgreSQL learns a scope's size from its first search: from then on a large one is copied.
    tenant.candidates(key, vectors[0], ["kafka"], CandidateFilter(), 10)
    return key, np.array([j.rowid for j in jobs]), vectors


def _queries(seed: int = 11, n: int = 30) -> np.ndarray:
    return l2_normalize(np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32))


def _exact(rowids: np.ndarray, vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    scores = vectors @ query
    order = np.lexsort((rowids, -scores))[:k]
    return [int(r) for r in rowids[order]]


def _recall_at(tenant: TenantStore, key: str, rowids: np.ndarray, vectors: np.ndarray, k: int = 10) -> float:
    found = [
        len(
            set(_exact(rowids, vectors, q, k))
            & {c.rowid for c in tenant.vector_candidates(key, q, CandidateFilter(), k)}
        )
        / k
        for q in _queries()
    ]
    return float(np.mean(found))


@pytest.mark.parametrize(
    ("full", "product"),
    [(True, True), (True, False), (False, False)],
    ids=["full-precision-copy", "codes-held-vectors", "codes-read-back"],
)
def test_vector_arm_is_exact_below_the_list_size(
    open_store: OpenStore, full: bool, product: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small scope keeps float32 vectors (one product); a bigger one scans int8 codes and scores
    # its short list from the vectors it holds, a bigger one still reads them back: all exact.
    monkeypatch.setattr(vector_index, "FULL_ROWS", vector_index.FULL_ROWS if full else 0)
    monkeypatch.setattr(vector_index, "PRODUCT_ROWS", vector_index.PRODUCT_ROWS if product else 0)
    store = open_store(copy_min_rows=1)  # PostgreSQL: the copy from the first read on
    key, rowids, vectors = _fill(store)
    tenant = store.tenant("t1")
    for query in _queries():
        got = tenant.vector_candidates(key, query, CandidateFilter(), 25)
        assert [c.rowid for c in got] == _exact(rowids, vectors, query, 25)
        # the scores are the full-precision cosines, not the int8 codes' approximations
        expected = {int(r): float(s) for r, s in zip(rowids, vectors @ query, strict=True)}
        assert all(abs(c.score - expected[c.rowid]) < 1e-5 for c in got)


@pytest.mark.parametrize("full", [True, False], ids=["full-precision-copy", "codes-read-back"])
def test_a_fact_search_ranking_is_exact_from_held_or_read_back_vectors(
    open_store: OpenStore, full: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A structured fact search ranks a scope's rows by their cosine (no words here): a small
    # scope's copy scores its short list with the vectors it holds, a bigger one reads them back.
    monkeypatch.setattr(vector_index, "FULL_ROWS", vector_index.FULL_ROWS if full else 0)
    store = open_store(copy_min_rows=1)
    key, rowids, vectors = _fill(store)
    for query in _queries(n=10):
        got = store.tenant("t1").rank_facts(key, rowids[::-1], query, [], 25, "test")
        cosines = np.clip(vectors @ query, 0, 1)
        assert [c.rowid for c in got] == [int(r) for r in rowids[np.lexsort((-rowids, -cosines))[:25]]]
        assert all(abs(c.score - float(cosines[rowids == c.rowid][0])) < 1e-5 for c in got)


def test_large_scopes_search_lists_and_keep_recall(open_store: OpenStore) -> None:
    exact = open_store(copy_min_rows=1)
    key, rowids, vectors = _fill(exact)
    assert _recall_at(exact.tenant("t1"), key, rowids, vectors) == 1.0
    # Above ann_min_rows the lists decide what is scanned: probing every list finds what exact finds,
    every = open_store(copy_min_rows=1, ann_min_rows=ROWS // 2, ann_probe_share=1.0)
    _fill(every)
    assert _recall_at(every.tenant("t1"), key, rowids, vectors) == 1.0
    # a third of them keeps recall on this small set,
    third = open_store(copy_min_rows=1, ann_min_rows=ROWS // 2, ann_probe_share=0.34)
    _fill(third)
    assert _recall_at(third.tenant("t1"), key, rowids, vectors) >= 0.9
    # and one list alone misses true neighbours: the approximate path is the one in use.
    one = open_store(copy_min_rows=1, ann_min_rows=ROWS // 2, ann_probe_share=0.01)
    _fill(one)
    assert _recall_at(one.tenant("t1"), key, rowids, vectors) < 0.9


@pytest.mark.postgres
def test_postgres_answers_large_scopes_from_the_copy(pg_url: str, tmp_path: Path) -> None:
    from engramdb.storage.postgres.store import PostgresStore

    def open_store(**options: Any) -> Store:
        return PostgresStore(pg_url, schema=f"t_{uuid.uuid4().hex[:12]}", **options)

    reference = SQLiteStore(tmp_path / "reference")  # the copy's engine, on SQLite
    key, _, _ = _fill(reference)
    small, large = open_store(copy_min_rows=ROWS + 1), open_store(copy_min_rows=ROWS)
    _fill(small)
    _fill(large)
    terms = lexical_terms("kafka deploy in lisbon")
    query = _queries(n=1)[0]
    expected = reference.tenant("t1").candidates(key, query, terms, CandidateFilter(), 20)
    with large.tenant("t1").reading() as tenant:
        assert tenant.candidates(key, query, terms, CandidateFilter(), 20) == expected  # BM25, as SQLite
    with small.tenant("t1").reading() as tenant:
        dense, lexical = tenant.candidates(key, query, terms, CandidateFilter(), 20)
    assert [c.rowid for c in dense] == [c.rowid for c in expected[0]]  # exact either way
    assert lexical and lexical != expected[1]  # below the size: ts_rank over the scope's rows
    for store in (reference, small, large):
        store.close()


def test_memory_limit_drops_the_least_recently_used_scope(tmp_path: Path) -> None:
    sizing = SQLiteStore(tmp_path / "sizing")  # one scope of 600 rows, to size the limit by
    one, _, _ = _fill(sizing)
    sizing.tenant("t1").vector_candidates(one, _queries(n=1)[0], CandidateFilter(), 10)
    room = sizing.scope_copies.nbytes * 1.5 / 2**20  # room for one scope, not two
    sizing.close()
    store = SQLiteStore(tmp_path / "home", memory_mb=room)
    first, _, _ = _fill(store)
    second, _, _ = _fill(store, seed=4, participant="bob")
    tenant = store.tenant("t1")
    query = _queries(n=1)[0]
    before = tenant.vector_candidates(first, query, CandidateFilter(), 10)
    assert [key.endswith(first) for key, _ in store.scope_copies.held()] == [True]
    tenant.vector_candidates(second, query, CandidateFilter(), 10)
    held = [key for key, _ in store.scope_copies.held()]
    assert len(held) == 1 and held[0].endswith(second)  # the first scope was dropped
    assert store.scope_copies.nbytes <= store.scope_copies.max_bytes
    loads = store.scope_copies.loads
    assert tenant.vector_candidates(first, query, CandidateFilter(), 10) == before  # reloaded: same answer
    assert store.scope_copies.loads == loads + 1
    roomy = SQLiteStore(tmp_path / "roomy")  # positive control: under the default limit both stay
    a, _, _ = _fill(roomy)
    b, _, _ = _fill(roomy, seed=4, participant="bob")
    for key in (a, b):
        roomy.tenant("t1").vector_candidates(key, query, CandidateFilter(), 10)
    assert len(roomy.scope_copies.held()) == 2
    store.close()
    roomy.close()
