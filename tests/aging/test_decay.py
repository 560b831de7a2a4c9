"""Decay and archival on both backends: each decision of the policy, pins and protection, use
counts recorded in batches, restore, and retention. Time is injected: the sweep is told when
"now" is, so a memory written a moment ago is 400 days old to it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from engramdb import clock
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import audit
from engramdb.core.aging.sweep import sweep
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.models.admin import AuditQuery
from engramdb.models.aging import MarkRequest, RestoreRequest
from engramdb.models.memories import FactQuery
from engramdb.models.policy import TenantPolicy
from engramdb.models.recall import RecallRequest
from tests.factories import episode_body, fact_body, scope_fields

SCOPE = scope_fields()


def _later(days: float) -> datetime:
    return clock.utc_now() + timedelta(days=days)


def _fact(service: MemoryService, caller: Caller, text: str, kind: str) -> str:
    return service.writes.write_fact(
        caller, FactWrite.model_validate(fact_body(text, kind=kind, scope=SCOPE))
    ).memory.id


def _episode(service: MemoryService, caller: Caller, text: str, turn: int) -> str:
    body = episode_body(text, turn=turn, scope=SCOPE, observedAt=clock.now_text())
    return service.writes.write_episode(caller, EpisodeWrite.model_validate(body)).id


def _status(service: MemoryService, caller: Caller, fact_id: str) -> str:
    facts = service.reads.list_facts(caller, FactQuery.model_validate({**SCOPE, "includeHistory": True})).facts
    return next(f.status for f in facts if f.id == fact_id)


def _recalled(service: MemoryService, caller: Caller, query: str, **extra: Any) -> list[str]:
    body = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": 50, "expand": 0, **extra})
    return [m.id for m in service.reads.recall(caller, body).memories]


def test_each_decision_of_the_policy(service: MemoryService, operator: Caller) -> None:
    weak = _fact(service, operator, "The office plant is a fern", "plant")
    pinned = _fact(service, operator, "The user's blood type is O negative", "blood")
    protected = _fact(service, operator, "The user is allergic to penicillin", "allergy")
    just_below = _fact(service, operator, "The user's car is blue", "car")
    used = _fact(service, operator, "The user's editor is Helix", "editor")
    service.aging.mark_fact(operator, pinned, MarkRequest.model_validate({"pinned": True, "scope": SCOPE}))
    service.aging.mark_fact(operator, protected, MarkRequest.model_validate({"importance": 0.8, "scope": SCOPE}))
    service.aging.mark_fact(operator, just_below, MarkRequest.model_validate({"importance": 0.79, "scope": SCOPE}))
    for _ in range(5):  # count of use: recalled five times (alone), written as one batch
        assert _recalled(service, operator, "which editor does the user use", limit=1) == [used]
    service.shared.usage.flush(service.shared.store)
    tenant = service.shared.store.tenant("t1")

    assert sweep(tenant, _later(89)).archived == 0, "younger than archiveAfterDays: kept however weak"
    # 100 days idle: 0.5 ** (100 / 30) = 0.099 < 0.25; five uses lift it to 0.277.
    assert sweep(tenant, _later(100)).archived == 2
    assert {f: _status(service, operator, f) for f in (weak, pinned, protected, just_below, used)} == {
        weak: "archived",
        pinned: "active",
        protected: "active",
        just_below: "archived",
        used: "active",
    }
    assert weak not in _recalled(service, operator, "office plant fern"), "archived memories leave recall"
    assert weak in _recalled(service, operator, "office plant fern", includeArchived=True)
    entries = service.admin.audit(operator, AuditQuery(action="memory.archive", limit=100)).entries
    assert {(e.target_id, e.actor_role) for e in entries} == {(weak, "system"), (just_below, "system")}
    assert all("strength" in (e.reason or "") for e in entries)
    assert audit.verify(tenant).ok


def test_recency_of_use_keeps_a_memory(service: MemoryService, operator: Caller) -> None:
    fresh = _episode(service, operator, "We deployed the billing service on Friday", 0)
    stale = _episode(service, operator, "The cafeteria served soup on Monday", 1)
    tenant = service.shared.store.tenant("t1")
    row = next(
        r for r in tenant.aging.active_rows(clock.to_text(_later(1)), after_rowid=0, limit=10) if r.memory_id == fresh
    )
    tenant.aging.record_use([(row.rowid, 1, clock.to_text(_later(95)))])  # recalled on day 95
    assert sweep(tenant, _later(100)).archived == 1
    assert _recalled(service, operator, "billing service deployed") == [fresh]
    assert stale in _recalled(service, operator, "cafeteria soup", includeArchived=True)
    assert stale not in _recalled(service, operator, "cafeteria soup")


def test_protected_episode_and_episodes_are_not_pinned(service: MemoryService, operator: Caller) -> None:
    kept = _episode(service, operator, "The user's daughter was born today", 0)
    service.aging.mark_episode(operator, kept, MarkRequest.model_validate({"importance": 0.95, "scope": SCOPE}))
    assert sweep(service.shared.store.tenant("t1"), _later(400)).archived == 0
    with pytest.raises(Exception, match="only facts are pinned"):
        service.aging.mark_episode(operator, kept, MarkRequest.model_validate({"pinned": True, "scope": SCOPE}))


def test_restore_brings_it_back_and_it_is_not_archived_again_at_once(service: MemoryService, operator: Caller) -> None:
    fact = _fact(service, operator, "The team meets on Tuesdays", "meeting")
    tenant = service.shared.store.tenant("t1")
    with pytest.raises(ConflictError):  # only an archived memory is restored
        service.aging.restore_fact(operator, fact, RestoreRequest.model_validate({"scope": SCOPE}))
    assert sweep(tenant, _later(200)).archived == 1
    service.shared.now = lambda: _later(200)  # restored on the day it was archived
    restored = service.aging.restore_fact(
        operator, fact, RestoreRequest.model_validate({"scope": SCOPE, "reason": "asked"})
    )
    assert restored.status == "active" and fact in _recalled(service, operator, "when does the team meet")
    assert sweep(tenant, _later(201)).archived == 0, "restored means used: it starts strong again"
    entries = service.admin.audit(operator, AuditQuery(action="memory.restore", limit=10)).entries
    assert [(e.target_id, e.actor_key_id) for e in entries] == [(fact, operator.key_id)]
    assert audit.verify(tenant).ok


def test_restore_refuses_a_slot_that_holds_another_value(service: MemoryService, operator: Caller) -> None:
    old = _fact(service, operator, "The user lives in Lyon", "city")
    tenant = service.shared.store.tenant("t1")
    assert sweep(tenant, _later(200)).archived == 1
    _fact(service, operator, "The user lives in Nantes", "city")
    with pytest.raises(ConflictError, match="holds this slot"):
        service.aging.restore_fact(operator, old, RestoreRequest.model_validate({"scope": SCOPE}))
    assert _status(service, operator, old) == "archived"


def test_retention_erases_old_episodes_only(service: MemoryService, operator: Caller) -> None:
    episode = _episode(service, operator, "A turn about lunch", 0)
    fact = _fact(service, operator, "The user likes tea", "drink")
    policy = TenantPolicy.model_validate({"retention": {"episodeDays": 30}, "aging": {"archiveAfterDays": 365}})
    service.admin.put_policy(operator, policy)
    tenant = service.shared.store.tenant("t1")
    assert sweep(tenant, _later(29)).erased_episodes == 0
    counts = sweep(tenant, _later(31))
    assert (counts.erased_episodes, counts.erased_facts, counts.archived) == (1, 0, 0)
    assert tenant.get_memory(SCOPE_KEY(), "EPISODE", episode) is None
    assert _status(service, operator, fact) == "active"
    entries = service.admin.audit(operator, AuditQuery(action="memory.retention", limit=10)).entries
    assert [(e.target_id, e.actor_role) for e in entries] == [(episode, "system")]
    assert audit.verify(tenant).ok


def SCOPE_KEY() -> str:
    from engramdb.core import auth

    return auth.scope_key(auth.resolve_scope(Caller(tenant="t1", key_id="x", role="admin"), SCOPE))
