"""What recall reads from the query itself, through the production service on both backends:
dates it names (the date feature) and words no memory contains (the lexical arm's weight)."""

from __future__ import annotations

import math

import pytest

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.recall import coverage
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()


def _service(store: Store, settings: Settings, **retrieval: float) -> MemoryService:
    tuned = settings.model_copy(update={"retrieval": RetrievalSettings.model_validate(retrieval)})
    return MemoryService(store, HashingEmbedder(), tuned)


def _write(service: MemoryService, caller: Caller, text: str, session: str, observed: str) -> None:
    body = episode_body(text, "", session=session, turn=0, scope=SCOPE, observedAt=observed)
    service.writes.write_episode(caller, EpisodeWrite.model_validate(body))


def _ask(service: MemoryService, caller: Caller, query: str, **extra: object) -> RecallResponse:
    body = {"query": query, "scope": SCOPE, "limit": 5, "explain": True, **extra}
    return service.reads.recall(caller, RecallRequest.model_validate(body))


# -- the date feature -------------------------------------------------------------------------


def _three_lake_trips(service: MemoryService, caller: Caller, store: Store) -> None:
    _write(service, caller, "We went to the lake with the kids", "march", "2023-03-05T10:00:00Z")
    _write(service, caller, "We went to the lake with the kids", "october", "2023-10-16T10:00:00Z")
    _write(service, caller, "We went to the lake with the kids", "january", "2024-01-20T10:00:00Z")
    drain(store.tenant("t1"), service.shared.embedder)


def test_a_memory_observed_just_after_the_named_date_ranks_first(
    store: Store, settings: Settings, operator: Caller
) -> None:
    service = _service(store, settings)
    _three_lake_trips(service, operator, store)

    undated = _ask(service, operator, "Where did we go with the kids?", sessions=3)
    assert [m.observed_at[:7] for m in undated.memories] == ["2024-01", "2023-10", "2023-03"]  # recency breaks the tie
    assert all("date" not in m.explain.features for m in undated.memories if m.explain)

    dated = _ask(service, operator, "Where did we go with the kids on 13 October, 2023?", sessions=3)
    assert [m.observed_at[:7] for m in dated.memories] == ["2023-10", "2024-01", "2023-03"]
    first = dated.memories[0].explain
    assert first is not None and first.features["date"] == pytest.approx(0.3)  # 3 days after: inside the grace
    assert dated.sessions is not None and dated.sessions[0].session_id == "october"  # the session ranking reads it too
    for m in dated.memories:  # explain still adds up
        assert m.explain is not None
        parts = sum(a.contribution for a in m.explain.arms.values()) + sum(m.explain.features.values())
        assert parts == pytest.approx(m.score)


def test_the_date_feature_is_off_at_weight_zero(store: Store, settings: Settings, operator: Caller) -> None:
    service = _service(store, settings, date_weight=0.0)
    _three_lake_trips(service, operator, store)
    memories = _ask(service, operator, "Where did we go with the kids on 13 October, 2023?").memories
    assert [m.observed_at[:7] for m in memories] == ["2024-01", "2023-10", "2023-03"]
    assert all(m.explain is not None and "date" not in m.explain.features for m in memories)


# -- the lexical arm's weight -----------------------------------------------------------------


def test_coverage_is_the_share_of_idf_the_scope_can_match() -> None:
    assert coverage(10, [1, 0]) == pytest.approx(math.log(9.5 / 1.5) / (math.log(9.5 / 1.5) + math.log(10.5 / 0.5)))
    assert coverage(10, [1, 3]) == 1.0
    assert coverage(10, [0, 0]) == 0.0
    assert coverage(0, [0]) == 1.0  # an empty scope: nothing to weigh


def _fruit(service: MemoryService, caller: Caller, store: Store) -> None:
    _write(service, caller, "apple pie recipe from grandma", "s0", "2026-08-18T00:00:00Z")
    for i, text in enumerate(
        [
            "banana bread",
            "cherry jam",
            "plum cake",
            "pear tart",
            "fig roll",
            "lime curd",
            "kiwi salad",
            "mango lassi",
            "grape juice",
        ]
    ):
        _write(service, caller, text, f"s{i + 1}", "2026-08-18T00:00:00Z")
    drain(store.tenant("t1"), service.shared.embedder)


def _lexical_part(response: RecallResponse, text: str) -> float:
    """The lexical arm's contribution to ``text``, checked against the arm weight explain reports
    (the top lexical row's normalised score is 1, so the two are equal)."""
    memory = next(m for m in response.memories if m.text == text)
    assert memory.explain is not None
    lexical, dense = memory.explain.arms["lexical"], memory.explain.arms["dense"]
    assert lexical.rank == 1 and lexical.contribution == pytest.approx(lexical.weight)
    assert lexical.weight + dense.weight == pytest.approx(1.0)
    return lexical.contribution


def test_the_lexical_arm_weighs_less_when_query_words_are_in_no_memory(
    store: Store, settings: Settings, operator: Caller
) -> None:
    service = _service(store, settings)
    _fruit(service, operator, store)
    share = coverage(10, [1, 0])  # "apple" is in 1 of 10 memories, "zebra" in none
    expected = 0.5 * share / (0.5 + 0.5 * share)  # the top lexical row's normalised score is 1
    assert expected == pytest.approx(0.274, abs=1e-3)  # by hand: 1.846 / (1.846 + 3.045) = 0.377
    pie = "apple pie recipe from grandma"
    assert _lexical_part(_ask(service, operator, "apple zebra"), pie) == pytest.approx(expected)
    # Positive controls: every word found, or a date word missing, or the exponent at 0: full weight.
    assert _lexical_part(_ask(service, operator, "apple pie"), pie) == pytest.approx(0.5)
    assert _lexical_part(_ask(service, operator, "apple october 2023"), pie) == pytest.approx(0.5)
    off = _service(store, settings, lexical_coverage_exponent=0.0)
    assert _lexical_part(_ask(off, operator, "apple zebra"), pie) == pytest.approx(0.5)
