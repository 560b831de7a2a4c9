"""A memory's lexical evidence read from what the store keeps of its indexed body equals what
stemming that body finds (core/relevance.py: ``indexed_evidence``): an episode's text, a fact's
text with its subject and kind. A scope copy's index answers on both backends; PostgreSQL reads a
small scope from each row's tsvector, as that scope's lexical arm does. Relevance then never stems
a long memory again on each recall (bench/RESULTS.md: 400 such memories made a recall take seconds)."""

from __future__ import annotations

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.relevance import QueryWords, indexed_evidence
from engramdb.core.service import MemoryService
from engramdb.lexical.index import tokenize
from engramdb.storage.port import CandidateFilter, MemoryRecord, Store, TenantStore
from engramdb.storage.postgres.store import PostgresStore
from tests.factories import episode_body, fact_body, scope_fields
from tests.storage.conftest import OpenStore

WORDS = ("accuracy", "accuracies", "rating", "rate", "visibility", "café", "cafe", "coverage", "Module", "x_y", "42%")
WORDS_OF_FACTS = ("quiz", "preference", "rated")
SCOPE = scope_fields()
TEXTS = [
    "My quiz accuracy rose to 90% after the ratings came in.",
    "The café's visibility and the module coverage: 42%.",
    "x_y rate limits, then accuracies of 3 modules",
    "Nothing here matches.",
    "cafe RATING coverage coverage coverage",
]
FACTS = [("My accuracy rate is 90%.", "user.quiz"), ("Visibility is rated by module.", "project:cafe")]


def _filled(store: Store) -> tuple[str, dict[int, MemoryRecord]]:
    """A scope holding TEXTS as episodes and FACTS as facts (text, subject), and its records."""
    store.tenant("t1", create=True)
    service = MemoryService(store, HashingEmbedder(), Settings(embedder="hashing"))
    caller = Caller(tenant="t1", key_id="op", role="admin")
    ids = [
        service.writes.write_episode(
            caller, EpisodeWrite.model_validate(episode_body(t, "ok", summary=t, turn=i, scope=SCOPE))
        ).id
        for i, t in enumerate(TEXTS)
    ]
    ids += [
        service.writes.write_fact(caller, FactWrite.model_validate(fact_body(t, subject=s, scope=SCOPE))).id
        for t, s in FACTS
    ]
    tenant = store.tenant("t1")
    records = {r.rowid: r for r in (tenant.memories_by_id(i)[0][0] for i in ids)}
    return next(iter(records.values())).scope_key, records


def _words(weights: dict[str, float]) -> QueryWords:
    """The query words ``weights`` gives (word -> IDF) as recall weighs them, spellings included."""
    stems: dict[str, float] = {}
    for word, weight in weights.items():
        for stem in tokenize(word):
            stems[stem] = max(stems.get(stem, 0.0), weight)
    return QueryWords(stems, len(TEXTS) + len(FACTS), QueryWords.of(list(weights), 1, {}).spellings)


def test_index_evidence_is_what_stemming_the_body_finds(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1)  # PostgreSQL: the copy from the first read on
    scope_key, records = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    seen: list[int] = []

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.dictionaries(st.sampled_from(WORDS + WORDS_OF_FACTS), st.floats(0.0, 5.0, allow_nan=False), max_size=4))
    def check(weights: dict[str, float]) -> None:
        words = _words(weights)
        held = tenant.word_evidence(scope_key, words.stems, list(records), words.spellings)
        if sum(words.stems.values()) > 0:
            assert set(held) == set(records)  # every row is in the scope's copy
            seen.append(len(held))
        for rowid, share in held.items():
            assert share == words.body_evidence(records[rowid])  # exactly, not nearly

    check()
    assert seen  # the positive control: some draws had words, and every row was read from the index


def test_a_fact_is_read_with_its_subject(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1)
    scope_key, records = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    fact = next(r for r in records.values() if r.subject_key == "user.quiz")
    words = QueryWords({"accuraci": 2.0, "quiz": 2.0}, len(records))
    held = indexed_evidence(tenant, scope_key, words, records.values())
    assert held == {r.rowid: words.body_evidence(r) for r in records.values()}
    assert held[fact.rowid] == 1.0 and words.evidence(fact.text) == 0.5  # "quiz" is its subject, not its text
    assert any(v == 0 for v in held.values())
    assert indexed_evidence(tenant, scope_key, QueryWords({}, len(records)), records.values()) == {}


def test_a_small_postgresql_scope_is_read_from_its_tsvector(open_store: OpenStore, backend: str) -> None:
    store = open_store(copy_min_rows=1_000)  # PostgreSQL answers this scope by SQL; SQLite from its copy
    scope_key, records = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    checked = 0
    for weights in ({"accuracy": 2.0, "quiz": 1.0}, {"café": 1.0, "coverage": 3.0}, {"rated": 1.0, "Module": 0.5}):
        words = _words(weights)
        held = tenant.word_evidence(scope_key, words.stems, list(records), words.spellings)
        expected = (
            _tsvector_oracle(store, records, words)
            if isinstance(store, PostgresStore)
            else {r: words.body_evidence(record) for r, record in records.items()}
        )
        assert held == expected
        assert any(v > 0 for v in held.values()) and any(v == 0 for v in held.values())
        checked += 1
    assert checked == 3
    unspelled = QueryWords({"accuraci": 1.0})  # a stem without the words that give it
    held = tenant.word_evidence(scope_key, unspelled.stems, list(records), unspelled.spellings)
    assert held == ({} if backend == "postgres" else {r: unspelled.body_evidence(m) for r, m in records.items()})


def test_a_small_postgresql_scope_agrees_with_porter_on_plain_english_words(
    open_store: OpenStore, backend: str
) -> None:
    # PostgreSQL's English stemmer and Porter give these words the same stems, and none is a stop
    # word: a small scope's relevance is the value its copy gives once it grows past copy_min_rows.
    store = open_store(copy_min_rows=1_000)
    scope_key, records = _filled(store)
    tenant = store.tenant("t1")
    _read_once(tenant, scope_key)
    for weights in (
        {"accuracy": 2.0, "quiz": 1.0},
        {"rated": 1.0, "Module": 0.5, "coverage": 3.0},
        {"visibility": 1.0},
    ):
        words = _words(weights)
        held = tenant.word_evidence(scope_key, words.stems, list(records), words.spellings)
        porter = {r: words.body_evidence(record) for r, record in records.items()}
        assert held == porter, weights
        assert any(v > 0 for v in held.values()) and any(v == 0 for v in held.values())
    # The control: where the two part. FTS5 folds "café" to "cafe"; PostgreSQL's English keeps the accent.
    words = _words({"café": 1.0})
    held = tenant.word_evidence(scope_key, words.stems, list(records), words.spellings)
    porter = {r: words.body_evidence(record) for r, record in records.items()}
    assert (held == porter) == (backend == "sqlite"), (held, porter)


def _tsvector_oracle(store: PostgresStore, records: dict[int, MemoryRecord], words: QueryWords) -> dict[int, float]:
    """The evidence from each row's lexemes and each spelling's, compared in Python."""
    total = sum(words.stems.values())
    with psycopg.connect(store.url, autocommit=True) as conn:
        lexemes = {
            rowid: set(found)
            for rowid, found in conn.execute(
                f"SELECT rowid, tsvector_to_array(tsv) FROM {store.schema}.memories WHERE rowid = ANY(%s)",
                [list(records)],
            )
        }
        spelled = {
            word: set(_one(conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [word]).fetchone()))
            for spellings in words.spellings.values()
            for word in spellings
        }
    return {
        rowid: sum(w for s, w in words.stems.items() if any(spelled[x] & held for x in words.spellings[s])) / total
        for rowid, held in lexemes.items()
    }


def _one(row: tuple[list[str]] | None) -> list[str]:
    assert row is not None
    return row[0]


def _read_once(tenant: TenantStore, scope_key: str) -> None:
    """A recall's read of the scope (PostgreSQL then answers it from the copy, if it is large)."""
    query = HashingEmbedder().embed(["accuracy"])[0]
    tenant.candidates(scope_key, query, ["accuracy"], CandidateFilter(vector_model=HashingEmbedder().model_id), 5)
