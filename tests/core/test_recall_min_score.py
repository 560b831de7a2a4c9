"""minScore on an absolute scale, and recall's filters on kind, subject, session and time (both backends).

The fused score is min-max normalised per query, so a scope's only memory scores 1 for any
question. ``relevance`` (cosine and lexical evidence) is absolute: the real embedding model puts
an unrelated memory far below a related one, whatever else the scope holds.
"""

from __future__ import annotations

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder, make_embedder
from engramdb.core.embedding_port import Embedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.factories import episode_body, fact_body, scope_fields

SCOPE = scope_fields()
TAX = "When is the quarterly tax filing deadline?"


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return make_embedder("minilm")  # the real model, from its PyPI package (no network)


def _fact(service: MemoryService, caller: Caller, text: str, **fields: str) -> str:
    return service.writes.write_fact(caller, FactWrite.model_validate(fact_body(text, scope=SCOPE, **fields))).id


def _recall(service: MemoryService, caller: Caller, query: str, **options: object) -> list[tuple[str, float, float]]:
    body = RecallRequest.model_validate({"query": query, "scope": SCOPE, **options})
    return [(m.id, m.score, m.relevance) for m in service.reads.recall(caller, body).memories]


def test_min_score_drops_the_unrelated_memory_that_ranks_first_with_score_one(
    store: Store, settings: Settings, operator: Caller, minilm: Embedder
) -> None:
    service = MemoryService(store, minilm, settings)
    dog = _fact(service, operator, "The user's dog is named Rex.", subject="user", kind="pet")
    drain(store.tenant("t1"), service.shared.embedder)
    # Today's ranking: the scope's only memory comes first with a fused score of 1 (plus features).
    [(first, score, relevance)] = _recall(service, operator, TAX)
    assert first == dog and score >= 1.0 and relevance < 0.3
    assert _recall(service, operator, TAX, minScore=0.3) == []
    # Positive control: a related memory passes the same floor, and the unrelated one still does not.
    tax = _fact(service, operator, "Quarterly tax filings are due on the 15th of April.", subject="user", kind="tax")
    drain(store.tenant("t1"), service.shared.embedder)
    kept = _recall(service, operator, TAX, minScore=0.3)
    assert [m[0] for m in kept] == [tax] and kept[0][2] >= 0.3


def test_lexical_evidence_counts_before_the_vector_is_ready(store: Store, settings: Settings, operator: Caller) -> None:
    service = MemoryService(store, HashingEmbedder(), settings)
    found = _fact(service, operator, "Staging runs in Frankfurt.", subject="infra", kind="staging")
    _fact(service, operator, "The dog is called Rex.", subject="user", kind="pet")
    assert [m[0] for m in _recall(service, operator, "frankfurt staging", minScore=0.9)] == [found]  # no vectors yet


def test_recall_filters_on_kind_subject_session_and_time(store: Store, settings: Settings, operator: Caller) -> None:
    service = MemoryService(store, HashingEmbedder(), settings)
    tea = _fact(service, operator, "The user drinks green tea.", subject="user", kind="drink")
    team = _fact(service, operator, "The team drinks coffee.", subject="team:core", kind="drink")
    _fact(service, operator, "The user likes tea shops.", subject="user", kind="likes")
    early, late = (
        service.writes.write_episode(
            operator,
            EpisodeWrite.model_validate(
                {
                    **episode_body(f"We talked about tea in {session}.", "Tea it is.", session=session, scope=SCOPE),
                    "observedAt": when,
                }
            ),
        ).id
        for session, when in (("s1", "2026-01-05T10:00:00Z"), ("s2", "2026-03-05T10:00:00Z"))
    )
    drain(store.tenant("t1"), service.shared.embedder)
    everything = {m[0] for m in _recall(service, operator, "tea", limit=20)}
    assert {tea, team, early, late} <= everything  # the positive control: unfiltered, all come back
    assert {m[0] for m in _recall(service, operator, "tea", kinds=["drink"])} == {tea, team}
    assert {m[0] for m in _recall(service, operator, "tea", subjectKey="user", kinds=["drink"])} == {tea}
    assert {m[0] for m in _recall(service, operator, "tea", subjectPrefix="team:")} == {team}
    assert {m[0] for m in _recall(service, operator, "tea", sessionId="s1")} == {early}
    window = {"after": "2026-02-01T00:00:00Z", "before": "2026-04-01T00:00:00Z", "sources": ["EPISODE"]}
    assert {m[0] for m in _recall(service, operator, "tea", **window)} == {late}
