"""Undoing a merge brings its originals back only over a merged fact that is still current, and never
a value tombstoned since (a hunt: undoing a retracted merge, or one whose original value a reviewer
had rejected since, made the originals current again)."""

from __future__ import annotations

from typing import Any

import pytest

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import ConflictError
from engramdb.models.aging import ArchiveRequest
from engramdb.models.derive import UndoConsolidation
from engramdb.models.lifecycle import RetractRequest
from tests.assist.brain import Brain
from tests.assist.helpers import ADMIN, derived_current, state, stated
from tests.assist.test_consolidation import MERGED, _consolidate, _current, _seed


def _merged(service: MemoryService, agent: Caller, brain: Brain) -> tuple[str, str, str]:
    derived_current(service)
    a, b, _ = _seed(service, agent)
    brain.merge = {"merge": True, "text": MERGED, "confidence": 0.95, "reason": "the same preference"}
    [group] = _consolidate(service, agent, similarity=0.9).groups
    assert group.merged is not None and group.merged.fact_id
    return a, b, group.merged.fact_id


def _undo(service: MemoryService, agent: Caller, merged: str) -> list[str]:
    undone = service.derivations.undo_consolidation(agent, merged, UndoConsolidation(reason="different trips"))
    return sorted(r.id for r in undone.restored)


@pytest.mark.parametrize("decision", ["none", "retracted", "archived"])
def test_only_a_current_merge_is_undone(
    service: MemoryService, agent: Caller, brain: Brain, scope: dict[str, Any], decision: str
) -> None:
    a, b, merged = _merged(service, agent, brain)
    if decision == "none":  # the control: a current merge is undone, its originals current again
        assert _undo(service, agent, merged) == sorted([a, b])
        assert state(service, agent, a) == state(service, agent, b) == "active"
        return
    if decision == "retracted":
        service.writes.retract_fact(agent, merged, RetractRequest(reason="the user gave up hiking"))
    else:
        service.aging.archive_fact(ADMIN, merged, ArchiveRequest.model_validate({"reason": "old", "scope": scope}))
    with pytest.raises(ConflictError) as refused:
        _undo(service, agent, merged)
    assert f"is {decision}" in refused.value.message
    assert state(service, agent, a) == state(service, agent, b) == "superseded"
    assert state(service, agent, merged) == decision


def test_an_original_tombstoned_since_stays_retired(service: MemoryService, agent: Caller, brain: Brain) -> None:
    a, b, merged = _merged(service, agent, brain)
    again = stated(service, agent, "The user likes hiking in the mountains", kind="likes", source="t9")
    service.writes.retract_fact(agent, again, RetractRequest(reason="the user never hikes"))  # tombstones a's value
    with pytest.raises(ConflictError) as refused:
        _undo(service, agent, merged)
    assert refused.value.field == "text" and "tombstoned" in refused.value.message
    assert state(service, agent, a) == state(service, agent, b) == "superseded"  # nothing of the undo was kept
    assert state(service, agent, merged) == "active" and _current(service, agent) == sorted(
        [MERGED, "The user likes opera"]
    )
