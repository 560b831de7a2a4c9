"""``candidates``: both recall arms in one call give what each arm gives alone, and the session
neighbours a store learns while it searches are the ones ``adjacent`` looks up. Both backends
(PostgreSQL answers both arms in one statement and keeps the neighbours it saw for the
``reading()`` block)."""

from __future__ import annotations

import time

import pytest

from engramdb import clock
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.recall import lexical_terms
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.storage.port import CandidateFilter, Store
from tests.factories import episode_body, fact_body, scope_fields

SCOPE = scope_fields()
SCOPE_KEY = auth.scope_key(Scope.model_validate(SCOPE))
TOPICS = ["kafka deploy", "garden tomatoes", "flight to lisbon", "kafka consumer lag", "dentist visit"]


def _write_conversation(service: MemoryService, caller: Caller) -> str:
    """Two interleaved sessions and a fact; return a record time between the two halves."""
    for turn in range(6):
        for session in ("a", "b"):
            text = f"{TOPICS[(turn + len(session)) % len(TOPICS)]} in session {session} turn {turn}"
            service.writes.write_episode(
                caller, EpisodeWrite.model_validate(episode_body(text, "", session=session, turn=turn, scope=SCOPE))
            )
        if turn == 2:
            time.sleep(0.01)
            middle = clock.now_text()
            time.sleep(0.01)
    service.writes.write_fact(caller, FactWrite.model_validate(fact_body("Kafka runs on three brokers", scope=SCOPE)))
    drain(service.shared.store.tenant("t1"), service.shared.embedder)
    return middle


FILTERS = {
    "current": CandidateFilter(),
    "episodes only": CandidateFilter(sources=("EPISODE",)),
    "as of the middle": None,  # set per test: rows written later are left out but still link
}


@pytest.mark.parametrize("which", sorted(FILTERS))
@pytest.mark.parametrize("query", ["kafka deploy", "tomatoes in the garden", "zzzz unknown", ""])
def test_candidates_are_each_arm_alone(
    store: Store, service: MemoryService, operator: Caller, which: str, query: str
) -> None:
    middle = _write_conversation(service, operator)
    filt = FILTERS[which] or CandidateFilter(as_of=middle)
    tenant = store.tenant("t1")
    vector = HashingEmbedder().embed([query or "empty"])[0]
    terms = lexical_terms(query)
    dense, lexical = tenant.candidates(SCOPE_KEY, vector, terms, filt, 8)
    assert dense == tenant.vector_candidates(SCOPE_KEY, vector, filt, 8)
    assert lexical == (tenant.text_candidates(SCOPE_KEY, terms, filt, 8) if terms else [])
    assert dense  # positive control: the dense arm always finds the scope's ready rows
    if query.startswith("kafka"):
        assert lexical  # positive control for the lexical arm


def test_neighbours_seen_while_searching_are_the_stored_ones(
    store: Store, service: MemoryService, operator: Caller
) -> None:
    middle = _write_conversation(service, operator)
    tenant = store.tenant("t1")
    vector = HashingEmbedder().embed(["kafka"])[0]
    filt = CandidateFilter(as_of=middle)  # later turns are not candidates, yet they are neighbours
    rowids = [c.rowid for c in tenant.vector_candidates(SCOPE_KEY, vector, filt, 50)]
    assert len(rowids) == 6  # the first three turns of each session (the fact came later)
    expected = tenant.adjacent(SCOPE_KEY, rowids)  # outside a reading() block: looked up
    beyond = [r for r in (*expected[0].tolist(), *expected[1].tolist()) if r >= 0]
    expected_beyond = tenant.adjacent(SCOPE_KEY, beyond)
    assert max(expected[1].tolist()) > max(rowids)  # a later, filtered-out turn is a neighbour
    with tenant.reading() as reader:
        reader.candidates(SCOPE_KEY, vector, ["kafka"], filt, 50)
        seen = reader.adjacent(SCOPE_KEY, rowids)
        seen_beyond = reader.adjacent(SCOPE_KEY, beyond)
    assert [a.tolist() for a in seen] == [a.tolist() for a in expected]
    assert [a.tolist() for a in seen_beyond] == [a.tolist() for a in expected_beyond]
    current = [c.rowid for c in tenant.vector_candidates(SCOPE_KEY, vector, CandidateFilter(), 50)]
    assert len(current) == 13  # every turn and the fact, which has no neighbours
    with tenant.reading() as reader:
        reader.candidates(SCOPE_KEY, vector, ["kafka"], CandidateFilter(), 50)
        seen = reader.adjacent(SCOPE_KEY, current)
    assert [a.tolist() for a in seen] == [a.tolist() for a in tenant.adjacent(SCOPE_KEY, current)]


@pytest.mark.parametrize(
    "words",
    [
        ["kafka", "lisbon", "zzzz"],
        ["tomatoes", "kafka", "tomatoes"],
        [],
        ["kafka", *(f"word{i}" for i in range(69)), "tomatoes"],
    ],
)  # a long query
def test_word_counts_seen_while_searching_are_the_stored_ones(
    store: Store, service: MemoryService, operator: Caller, words: list[str]
) -> None:
    """Counts cover the whole scope (any status, rows the filter leaves out too), as term_counts does."""
    middle = _write_conversation(service, operator)
    tenant = store.tenant("t1")
    vector = HashingEmbedder().embed(["kafka"])[0]
    expected = tenant.term_counts(SCOPE_KEY, words)  # outside a reading() block: counted apart
    assert expected[0] == 13 and (not words or expected[1]["kafka"] == 5)  # positive control: 4 turns + the fact
    with tenant.reading() as reader:
        reader.candidates(SCOPE_KEY, vector, words, CandidateFilter(as_of=middle), 8)
        assert reader.term_counts(SCOPE_KEY, words) == expected
        assert reader.term_counts(SCOPE_KEY, ["garden"]) == tenant.term_counts(SCOPE_KEY, ["garden"])  # not searched
