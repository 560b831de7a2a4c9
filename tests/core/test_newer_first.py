"""Newer beats older: of two recalled memories stating different values for the same thing, the newer
ranks first and the older is marked replaced, in the answer, ``explain`` and the context block;
on both backends, through the production service (issue 33)."""

from __future__ import annotations

import datetime as dt

from engramdb import clock
from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.conflicts import Claim, conflict, read_claim
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.lexical.index import tokenize
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()
QUESTION = "What is the average response time of the dashboard API?"
OLDER = "The dashboard API average response time is 400ms, measured on the dashboard API after the response cache"
NEWER = "Our dashboard API now responds in about 250ms on average"
OTHER = [
    "The mobile app build takes 12 minutes on the CI runners",
    "We moved the design review to Thursday at 3pm",
    "My laptop battery lasts about 6 hours now",
    "The newsletter goes out to 1200 readers every week",
]


def _service(store: Store, settings: Settings, **retrieval: object) -> MemoryService:
    tuned = settings.model_copy(update={"retrieval": RetrievalSettings.model_validate(retrieval)})
    return MemoryService(store, HashingEmbedder(), tuned)


def _seed(service: MemoryService, caller: Caller, store: Store) -> tuple[str, str]:
    start = clock.utc_now() - dt.timedelta(days=90)
    ids = []
    for i, text in enumerate([OLDER, *OTHER, NEWER]):
        at = clock.to_text(start + dt.timedelta(days=10 * i))
        body = episode_body(text, "Noted.", session="s", turn=i, scope=SCOPE, observedAt=at)
        ids.append(service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id)
    drain(store.tenant("t1"), service.shared.embedder)
    return ids[0], ids[-1]


def _ask(service: MemoryService, caller: Caller) -> RecallResponse:
    body = {"query": QUESTION, "scope": SCOPE, "limit": 5, "explain": True}
    return service.reads.recall(caller, RecallRequest.model_validate(body))


def test_the_newer_of_two_conflicting_memories_ranks_first(store: Store, settings: Settings, operator: Caller) -> None:
    older, newer = _seed(_service(store, settings), operator, store)

    control = _ask(_service(store, settings, newer_first=False), operator)
    ranked = [m.id for m in control.memories]
    assert ranked.index(older) < ranked.index(newer)  # the older one is the better word match
    assert all(m.replaced_by is None for m in control.memories)
    assert "replaced by" not in control.context

    answer = _ask(_service(store, settings), operator)
    ranked = [m.id for m in answer.memories]
    assert ranked.index(newer) == ranked.index(older) - 1  # just above it, nothing else moved past it
    first, second = (next(m for m in answer.memories if m.id == i) for i in (newer, older))
    assert second.replaced_by == newer and first.replaced_by is None
    assert second.explain is not None and second.explain.replaced_by == newer
    assert first.explain is not None and first.explain.features["newerFirst"] > 0
    assert first.score > second.score  # the order and the scores agree
    assert abs(first.explain.total - first.score) < 1e-9
    place = ranked.index(newer) + 1
    assert f"; replaced by Memory {place}]" in answer.context
    assert answer.context.count("replaced by") == 1


UPDATE = "The dashboard API response time is down to 300ms on average"
SECOND = "Response time of the dashboard API: 250ms now"


def _seed_chain(service: MemoryService, caller: Caller, store: Store) -> list[str]:
    """An original, then its update, then a second update (each ten days apart), among others."""
    start = clock.utc_now() - dt.timedelta(days=90)
    ids = []
    for i, text in enumerate([OLDER, OTHER[0], UPDATE, *OTHER[1:], SECOND]):
        at = clock.to_text(start + dt.timedelta(days=10 * i))
        body = episode_body(text, "Noted.", session="s", turn=i, scope=SCOPE, observedAt=at)
        ids.append(service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id)
    drain(store.tenant("t1"), service.shared.embedder)
    return [ids[0], ids[2], ids[-1]]


def test_an_original_and_two_updates_read_newest_first(store: Store, settings: Settings, operator: Caller) -> None:
    original, update, second = _seed_chain(_service(store, settings), operator, store)

    control = _ask(_service(store, settings, newer_first=False), operator)
    ranked = [m.id for m in control.memories]
    assert ranked.index(original) < ranked.index(update) < ranked.index(second)  # oldest the best match

    answer = _ask(_service(store, settings), operator)
    ranked = [m.id for m in answer.memories]
    top = ranked.index(second)
    assert ranked[top : top + 3] == [second, update, original]
    by_id = {m.id: m for m in answer.memories}
    assert by_id[original].replaced_by == second and by_id[update].replaced_by == second
    assert by_id[second].replaced_by is None
    scores = [by_id[i].score for i in (second, update, original)]
    assert scores == sorted(scores, reverse=True)  # the order and the scores agree


def test_claims_without_a_different_value_do_not_conflict() -> None:
    stems = {"dashboard": 2.0, "api": 2.0, "respons": 1.5, "time": 1.0, "averag": 1.0}
    a = read_claim("The dashboard API response time averages 400ms.", stems)
    b = read_claim("Dashboard API response time: still 400ms on average.", stems)
    c = read_claim("The dashboard API response time averages 250ms.", stems)
    assert a is not None and b is not None and c is not None
    assert not conflict(a, b, len(stems)) and conflict(a, c, len(stems))
    # another topic with another number is no conflict
    other = read_claim("The dashboard colour scheme has 12 shades.", stems)
    assert other is None or not conflict(a, other, len(stems))
    # a negation is a different value
    never = Claim(frozenset({"dashboard", "api"}), frozenset(), True)
    done = Claim(frozenset({"dashboard", "api"}), frozenset(), False)
    assert conflict(never, done, len(stems))


def test_a_claim_is_read_where_porter_respells_the_question_word() -> None:
    """Porter stems "accuracy" to "accuraci", which no form of the word starts with: read as a prefix
    of the memory's words, its claim was lost. The memory's words are stemmed as the question's are."""
    stems = {stem: w for word, w in (("accuracies", 2.0), ("quiz", 0.5), ("rating", 1.0)) for stem in tokenize(word)}
    assert set(stems) == {"accuraci", "quiz", "rate"}
    claim = read_claim("My quiz accuracy rose to 90% after the ratings came in.", stems)
    assert claim is not None and claim.topic == set(stems) and claim.values == {"90%"}
    unrelated = read_claim("My quiz took 20 minutes.", stems)  # the control: under a third of it
    assert unrelated is None
