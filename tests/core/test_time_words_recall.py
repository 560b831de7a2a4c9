"""Recall reads a question's relative time words, through the production service on both backends:
"last week", "two sessions ago", "before <event>" favour what they point at (issue 33)."""

from __future__ import annotations

import datetime as dt

from engramdb import clock
from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()


def _service(store: Store, settings: Settings, **retrieval: float) -> MemoryService:
    """A service with the time words on (``time_words_weight`` 0.5; off by default) unless told."""
    retrieval = {"time_words_weight": ON, **retrieval}
    tuned = settings.model_copy(update={"retrieval": RetrievalSettings.model_validate(retrieval)})
    return MemoryService(store, HashingEmbedder(), tuned)


ON = 0.5  # the weight these tests turn the time words on with


def _write(
    service: MemoryService, caller: Caller, text: str, session: str, observed: dt.datetime, turn: int = 0
) -> str:
    body = episode_body(text, "", session=session, turn=turn, scope=SCOPE, observedAt=clock.to_text(observed))
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _ask(service: MemoryService, caller: Caller, query: str, **extra: object) -> RecallResponse:
    body = {"query": query, "scope": SCOPE, "limit": 5, "explain": True, **extra}
    return service.reads.recall(caller, RecallRequest.model_validate(body))


def _last_weeks_friday() -> dt.datetime:
    today = clock.utc_now().replace(hour=12, minute=0, second=0, microsecond=0)
    return today - dt.timedelta(days=today.weekday() + 3)  # this week's Monday, less three days


FILLER = [
    "The dentist moved my appointment to Thursday",
    "My sister adopted a grey cat called Pixel",
    "I finished reading a novel about lighthouses",
    "The car needs new winter tyres before December",
    "We painted the fence a dark green colour",
    "The team meeting was moved to the afternoon",
    "I started learning to play the cello",
    "Our neighbours are building a greenhouse",
]


def _filler(service: MemoryService, caller: Caller, when: dt.datetime) -> None:
    for i, text in enumerate(FILLER):
        _write(service, caller, text, "filler", when - dt.timedelta(days=5 * i), turn=i)


def _ramen(service: MemoryService, caller: Caller, store: Store) -> tuple[str, str]:
    _filler(service, caller, _last_weeks_friday() - dt.timedelta(days=20))
    recent = _write(service, caller, "We tried a new ramen place near the station", "recent", _last_weeks_friday())
    older = _write(
        service,
        caller,
        "We tried the ramen place downtown, the best ramen place we know",
        "older",
        _last_weeks_friday() - dt.timedelta(days=90),
    )
    drain(store.tenant("t1"), service.shared.embedder)
    return recent, older


def test_last_week_finds_last_weeks_memory_not_an_older_better_word_match(
    store: Store, settings: Settings, operator: Caller
) -> None:
    recent, older = _ramen(_service(store, settings), operator, store)
    question = "Which ramen place did we try last week?"

    control = _ask(_service(store, settings, time_words_weight=0.0), operator, question)
    assert [m.id for m in control.memories][:2] == [older, recent]  # the older one is the better word match
    assert all(m.explain is not None and "timeWords" not in m.explain.features for m in control.memories)

    answer = _ask(_service(store, settings), operator, question)
    assert [m.id for m in answer.memories][:2] == [recent, older]
    first = answer.memories[0].explain
    assert first is not None and first.features["timeWords"] == 0.5  # inside last week's window
    second = answer.memories[1].explain
    assert second is not None and second.features["timeWords"] < 0.01  # three months before it


def test_as_of_is_the_anchor_of_relative_words(store: Store, settings: Settings, operator: Caller) -> None:
    service = _service(store, settings)
    recent, older = _ramen(service, operator, store)
    # Asked as of a week from now, "last week" is this week: neither memory is in it, so words decide.
    later = clock.to_text(clock.utc_now() + dt.timedelta(days=7))
    answer = _ask(service, operator, "Which ramen place did we try last week?", asOf=later)
    assert [m.id for m in answer.memories][:2] == [older, recent]


def test_two_sessions_ago_names_that_session(store: Store, settings: Settings, operator: Caller) -> None:
    service = _service(store, settings)
    start = clock.utc_now() - dt.timedelta(days=30)
    ids = {
        name: _write(service, operator, "The budget for the garden is settled", name, start + dt.timedelta(days=d))
        for name, d in (("first", 0), ("second", 10), ("third", 20))
    }
    drain(store.tenant("t1"), service.shared.embedder)
    question = "What budget for the garden did I give two sessions ago?"
    answer = _ask(service, operator, question)
    assert answer.memories[0].id == ids["second"]  # newest first: third (last session), then second
    control = _ask(_service(store, settings, time_words_weight=0.0, newer_first=False), operator, question)
    assert control.memories[0].id == ids["third"]  # without the words, recency breaks the tie


def test_before_an_event_favours_what_came_before_it(store: Store, settings: Settings, operator: Caller) -> None:
    service = _service(store, settings)
    start = clock.utc_now() - dt.timedelta(days=60)
    _filler(service, operator, start - dt.timedelta(days=5))
    mysql = _write(service, operator, "The orders service kept its data in MySQL", "a", start)
    _write(service, operator, "We finished the migration to Postgres today", "b", start + dt.timedelta(days=20))
    redis = _write(
        service, operator, "The orders service stores its data in Redis now", "c", start + dt.timedelta(days=40)
    )
    for i, text in enumerate(["The data team orders pizza on Fridays", "Where is the service manual?"]):
        _write(service, operator, text, "d", start + dt.timedelta(days=45), turn=i)
    drain(store.tenant("t1"), service.shared.embedder)
    question = "Where did the orders service store its data before the migration to Postgres?"
    control = _ask(_service(store, settings, time_words_weight=0.0, newer_first=False), operator, question)
    assert [m.id for m in control.memories].index(redis) < [m.id for m in control.memories].index(mysql)
    answer = _ask(service, operator, question)
    ranked = [m.id for m in answer.memories]
    assert ranked.index(mysql) < ranked.index(redis)
    assert next(m for m in answer.memories if m.id == mysql).explain.features["timeWords"] == 0.5  # type: ignore[union-attr]
