"""Listing a scope's episodes newest first, on both backends: filters, paging, scope."""

from __future__ import annotations

from engramdb import clock
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.storage.port import ListPosition, TenantStore
from tests.factories import episode_body, fact_body, participant, scope_fields

MINE = scope_fields()
THEIRS = scope_fields(participantScopeHash=participant("bob"))
KEY = auth.scope_key(Scope.model_validate(MINE))


def _write(service: MemoryService, operator: Caller) -> None:
    # Twelve turns over three days and two sessions; two share an instant (order: write order).
    for i in range(12):
        day = 10 + i // 4
        observed = f"2026-03-{day:02d}T0{i % 4}:00:00Z" if i != 7 else "2026-03-11T02:00:00Z"
        body = episode_body(f"turn {i}", session=f"s{i % 2}", turn=i, scope=MINE, observedAt=observed)
        service.writes.write_episode(operator, EpisodeWrite.model_validate(body))
    service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body("bob's turn", scope=THEIRS)))
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body("a fact, not an episode", scope=MINE)))


def _texts(rows: list) -> list[str]:  # type: ignore[type-arg]
    return [r.text.split("\n")[0] for r in rows]


def _all(tenant: TenantStore, **filters: str | None) -> list:  # type: ignore[type-arg]
    return tenant.list_episodes(
        KEY,
        session_id=filters.get("session_id"),
        after=filters.get("after"),
        before=filters.get("before"),
        below=None,
        limit=100,
    )


def test_newest_first_of_the_scope_only(service: MemoryService, operator: Caller) -> None:
    _write(service, operator)
    rows = _all(service.shared.store.tenant("t1"))
    assert len(rows) == 12 and {r.source for r in rows} == {"EPISODE"}
    assert "bob's turn" not in _texts(rows) and "a fact, not an episode" not in _texts(rows)
    stamps = [(r.observed_at, r.rowid) for r in rows]
    assert stamps == sorted(stamps, reverse=True)
    # turn 6 and turn 7 happened at the same instant: the later write comes first.
    assert _texts(rows).index("turn 7") == _texts(rows).index("turn 6") - 1
    # Positive control for the other scope: its own listing finds bob's turn.
    theirs = service.shared.store.tenant("t1").list_episodes(
        auth.scope_key(Scope.model_validate(THEIRS)), session_id=None, after=None, before=None, below=None, limit=5
    )
    assert _texts(theirs) == ["bob's turn"]


def test_session_and_time_filters(service: MemoryService, operator: Caller) -> None:
    _write(service, operator)
    tenant = service.shared.store.tenant("t1")
    assert set(_texts(_all(tenant, session_id="s1"))) == {f"turn {i}" for i in range(1, 12, 2)}
    after, before = clock.normalize("2026-03-11T00:00:00Z"), clock.normalize("2026-03-12T00:00:00Z")
    window = _texts(_all(tenant, after=after, before=before))
    assert set(window) == {"turn 4", "turn 5", "turn 6", "turn 7"}  # day 11: after inclusive, before not
    assert _texts(_all(tenant, session_id="nope")) == []
    assert len(_all(tenant)) == 12  # positive control: no filter lists them all


def test_the_count_matches_what_every_page_lists(service: MemoryService, operator: Caller) -> None:
    _write(service, operator)
    tenant = service.shared.store.tenant("t1")
    after, before = clock.normalize("2026-03-11T00:00:00Z"), clock.normalize("2026-03-12T00:00:00Z")
    for filters in ({}, {"session_id": "s1"}, {"after": after, "before": before}, {"session_id": "nope"}):
        named = {"session_id": None, "after": None, "before": None, **filters}
        assert tenant.count_episodes(KEY, **named) == len(_all(tenant, **filters)), filters
    assert tenant.count_episodes(KEY, session_id=None, after=None, before=None) == 12  # not bob's, not the fact


def test_paging_walks_every_episode_once(service: MemoryService, operator: Caller) -> None:
    _write(service, operator)
    tenant = service.shared.store.tenant("t1")
    seen: list[str] = []
    below: ListPosition | None = None
    while True:
        page = tenant.list_episodes(KEY, session_id=None, after=None, before=None, below=below, limit=5)
        seen += _texts(page)
        if len(page) < 5:
            break
        below = ListPosition(page[-1].observed_at, page[-1].rowid)
    assert seen == _texts(_all(tenant)) and len(set(seen)) == 12


def test_maintain_runs_on_a_serving_store(service: MemoryService, operator: Caller) -> None:
    _write(service, operator)
    service.shared.store.maintain()  # statistics and dead rows; the data stays as it was
    assert len(_all(service.shared.store.tenant("t1"))) == 12
