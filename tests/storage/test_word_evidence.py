"""An episode's lexical evidence read from the scope's index equals what stemming its text finds
(core/relevance.py: ``indexed_evidence``), on both backends; PostgreSQL reads a small scope by SQL,
so there its rows are left for the caller to read from text. Relevance then never stems a long
episode again on each recall (bench/RESULTS.md: 400 such episodes made a recall take seconds)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.relevance import QueryWords, indexed_evidence
from engramdb.core.service import MemoryService
from engramdb.lexical.index import tokenize
from engramdb.storage.port import CandidateFilter, Store, TenantStore
from tests.factories import episode_body, fact_body, scope_fields
from tests.storage.conftest import OpenStore

WORDS = ("accuracy", "accuracies", "rating", "rate", "visibility", "café", "cafe", "coverage", "Module", "x_y", "42%")
SCOPE = scope_fields()
TEXTS = [
    "My quiz accuracy rose to 90% after the ratings came in.",
    "The café's visibility and the module coverage: 42%.",
    "x_y rate limits, then accuracies of 3 modules",
    "Nothing here matches.",
    "cafe RATING coverage coverage coverage",
]


def _filled(store: Store) -> tuple[str, dict[int, str]]:
    """A scope holding TEXTS as episodes, and its rowids' texts."""
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    caller = Caller(tenant="t1", key_id="op", role="admin")
    ids = [
        service.writes.write_episode(
            caller, EpisodeWrite.model_validate(episode_body(t, "ok", summary=t, turn=i, scope=SCOPE))
        ).id
        for i, t in enumerate(TEXTS)
    ]
    tenant = store.tenant("t1")
    records = {r.rowid: r for r in (tenant.memories_by_id(i)[0][0] for i in ids)}
    scope_key = next(iter(records.values())).scope_key
    return scope_key, {rowid: r.text for rowid, r in records.items()}


def test_index_evidence_is_what_stemming_the_text_finds(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1)  # PostgreSQL: the copy from the first read on
    scope_key, texts = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    seen: list[int] = []

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.dictionaries(st.sampled_from(WORDS), st.floats(0.0, 5.0, allow_nan=False), max_size=4))
    def check(weights: dict[str, float]) -> None:
        stems = {stem: w for word, w in weights.items() for stem in tokenize(word)}
        words = QueryWords(stems, len(texts))
        held = tenant.word_evidence(scope_key, stems, list(texts))
        if sum(stems.values()) > 0:
            assert set(held) == set(texts)  # every row is in the scope's copy
            seen.append(len(held))
        for rowid, share in held.items():
            assert share == words.evidence(texts[rowid])  # exactly, not nearly

    check()
    assert seen  # the positive control: some draws had words, and every row was read from the index


def test_indexed_evidence_reads_episodes_only(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1)
    scope_key, texts = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    caller = Caller(tenant="t1", key_id="op", role="admin")
    fact_id = service.writes.write_fact(
        caller, FactWrite.model_validate(fact_body("My accuracy rate is 90%.", scope=SCOPE))
    ).id
    fact = tenant.memories_by_id(fact_id)[0][0]
    _read_once(tenant, scope_key)  # the copy takes the fact in
    records = [*tenant.records(list(texts), with_event=False).values(), fact]
    words = QueryWords({"accuraci": 2.0, "rate": 1.0}, len(texts))
    held = indexed_evidence(tenant, scope_key, words, records)
    assert held == {r.rowid: words.evidence(r.text) for r in records if r.source == "EPISODE"}
    assert fact.rowid not in held and words.evidence(fact.text) > 0  # the fact is left to its text, which matches
    assert any(v > 0 for v in held.values()) and any(v == 0 for v in held.values())
    assert indexed_evidence(tenant, scope_key, QueryWords({}, len(texts)), records) == {}  # no words, nothing read


def test_postgresql_leaves_a_small_scope_to_the_text(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1_000)  # PostgreSQL answers this scope by SQL; SQLite from its copy
    scope_key, texts = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    held = tenant.word_evidence(scope_key, {"accuraci": 1.0}, list(texts))
    assert held == (
        {} if backend == "postgres" else {r: QueryWords({"accuraci": 1.0}).evidence(t) for r, t in texts.items()}
    )


def _read_once(tenant: TenantStore, scope_key: str) -> None:
    """A recall's read of the scope (PostgreSQL then answers it from the copy, if it is large)."""
    query = HashingEmbedder().embed(["accuracy"])[0]
    tenant.candidates(scope_key, query, ["accuracy"], CandidateFilter(vector_model=HashingEmbedder().model_id), 5)
