"""Every way the server changes a row leaves it as the audit says (issue 30): the positive control of
the tamper tests in test_audit_covers_rows.py, on both backends.

Each write path records the state it left a row in; a path that forgot would fail verification
here, on rows nobody tampered with.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

from engramdb import clock
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.aging.sweep import sweep
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.admin import AuditVerdict, KeyCreateRequest
from engramdb.models.aging import MarkRequest, RestoreRequest
from engramdb.models.erasure import DeleteMemoryQuery, ForgetRequest
from engramdb.models.knowledge import DeleteQuery, LinkRequest, RecordChange, RecordWrite, UnlinkRequest
from engramdb.models.lifecycle import CorrectRequest, EditAndApprove, RejectDecision, RetractRequest, ReviewDecision
from engramdb.models.policy import TenantPolicy
from engramdb.storage.port import AuditDraft
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.surfaces.test_audit_cli import SCOPE

BOB = scope_fields(participantScopeHash=participant("bob"))


def _fact(service: MemoryService, operator: Caller, text: str, kind: str, **extra: Any) -> str:
    body = FactWrite.model_validate(fact_body(text, kind=kind, scope=extra.pop("scope", SCOPE), **extra))
    return service.writes.write_fact(operator, body).id


def _lifecycle(service: MemoryService, operator: Caller) -> None:
    """Supersede, store as history (closing a version), correct, retract, review every way, expire."""
    writes, review = service.writes, service.review
    _fact(service, operator, "Lives in Lyon", "city", validFrom="2026-01-01T00:00:00Z")
    paris = _fact(service, operator, "Lives in Paris", "city", validFrom="2026-03-01T00:00:00Z")
    _fact(service, operator, "Lives in Nice", "city", validFrom="2026-02-01T00:00:00Z")  # older: history
    writes.correct_fact(
        operator, paris, CorrectRequest.model_validate({"text": "Lives in Rome", "reason": "moved", "scope": SCOPE})
    )
    cat = _fact(service, operator, "Has a cat", "pet")
    writes.retract_fact(operator, cat, RetractRequest.model_validate({"reason": "no cat", "scope": SCOPE}))
    pending = [_fact(service, operator, f"Deploys on day {i}", f"deploy{i}", trustClass="untrusted") for i in range(3)]
    review.approve(operator, pending[0], ReviewDecision.model_validate({"scope": SCOPE}))
    review.reject(operator, pending[1], RejectDecision.model_validate({"reason": "wrong", "scope": SCOPE}))
    review.edit_and_approve(
        operator, pending[2], EditAndApprove.model_validate({"text": "Deploys on Mondays", "scope": SCOPE})
    )
    _fact(service, operator, "Is on call", "duty", validFrom="2026-01-01T00:00:00Z", validUntil="2026-01-02T00:00:00Z")
    tenant = service.shared.store.tenant("t1")
    assert tenant.expire_due(clock.now_text(), AuditDraft(action="system", actor_key_id=None, actor_role="system"))


def _aging(service: MemoryService, operator: Caller) -> None:
    """Marks, an archiving sweep, a restore."""
    kept = _fact(service, operator, "Prefers tea", "drink")
    service.aging.mark_fact(
        operator, kept, MarkRequest.model_validate({"pinned": True, "importance": 0.9, "scope": SCOPE})
    )
    episode = service.writes.write_episode(
        operator, EpisodeWrite.model_validate(episode_body("An old turn", turn=7, scope=SCOPE))
    ).id
    service.aging.mark_episode(operator, episode, MarkRequest.model_validate({"importance": 0.1, "scope": SCOPE}))
    assert sweep(service.shared.store.tenant("t1"), clock.utc_now() + timedelta(days=3650)).archived
    service.aging.restore_episode(operator, episode, RestoreRequest.model_validate({"scope": SCOPE}))


def _knowledge(service: MemoryService, operator: Caller) -> None:
    """Records written, merged, changed, linked, unlinked, deleted with their children."""
    records = service.record_writes
    session = {"title": "Database choice", "DECISION": [{"title": "Postgres"}], "TASK": [{"title": "Migrate"}]}
    root = records.write_records(
        operator,
        RecordWrite.model_validate({"label": "SESSION", "data": session, "mergeBy": ["title"], "scope": SCOPE}),
    ).records[0]
    again = {**session, "mood": "settled"}
    records.write_records(
        operator, RecordWrite.model_validate({"label": "SESSION", "data": again, "mergeBy": ["title"], "scope": SCOPE})
    )
    records.update_record(
        operator, root.id, RecordChange.model_validate({"properties": {"mood": None}, "scope": SCOPE})
    )
    dana = records.write_records(
        operator, RecordWrite.model_validate({"label": "ENTITY", "data": {"name": "Dana"}, "scope": SCOPE})
    ).records[0]
    link = {"source": root.id, "target": dana.id, "type": "MENTIONS", "properties": {"weight": 2}, "scope": SCOPE}
    records.link_records(operator, LinkRequest.model_validate(link))
    records.link_records(operator, LinkRequest.model_validate({**link, "type": "INVOLVES"}))
    records.unlink_records(operator, UnlinkRequest.model_validate({k: v for k, v in link.items() if k != "properties"}))
    service.record_deletes.delete_record(operator, root.id, DeleteQuery.model_validate({**SCOPE, "cascade": True}))


def _erasure(service: MemoryService, operator: Caller) -> None:
    """A fact and an episode deleted; a participant forgotten."""
    gone = _fact(service, operator, "Has a dog", "pet2")
    service.erasure.delete_fact(operator, gone, DeleteMemoryQuery.model_validate(SCOPE))
    episode = service.writes.write_episode(
        operator, EpisodeWrite.model_validate(episode_body("Forget me", turn=9, scope=SCOPE))
    )
    service.erasure.delete_episode(operator, episode.id, DeleteMemoryQuery.model_validate(SCOPE))
    service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body("Bob's turn", scope=BOB)))
    _fact(service, operator, "Bob likes jazz", "music", scope=BOB)
    service.erasure.forget_participant(
        operator, ForgetRequest.model_validate({"participantScopeHash": BOB["participantScopeHash"]})
    )


def test_every_write_leaves_its_rows_as_the_audit_says(service: MemoryService, operator: Caller) -> None:
    service.writes.write_episodes(
        operator, [EpisodeWrite.model_validate(episode_body(f"turn {i}", turn=i, scope=SCOPE)) for i in range(3)]
    )
    _lifecycle(service, operator)
    _aging(service, operator)
    _knowledge(service, operator)
    _erasure(service, operator)
    admin = service.admin
    created = admin.create_key(operator, KeyCreateRequest.model_validate({"role": "agent", "grant": SCOPE}))
    admin.create_key(operator, KeyCreateRequest.model_validate({"role": "reviewer"}))
    admin.revoke_key(operator, created.key_id)
    admin.put_policy(operator, TenantPolicy())
    service.shared.participant_hash(operator, "alice")
    verdict = admin.verify_audit(operator)
    assert verdict.verified, verdict
    assert verdict.memories_checked and verdict.memories_checked >= 15, verdict  # the walk saw the rows
    assert verdict.rows_checked and verdict.rows_checked >= verdict.memories_checked + 5, verdict
    policy = TenantPolicy.model_validate({"retention": {"episodeDays": 1}})
    admin.put_policy(operator, policy)
    assert sweep(service.shared.store.tenant("t1"), clock.utc_now() + timedelta(days=30)).erased_episodes
    after = admin.verify_audit(operator)
    assert after.verified and after.memories_checked and after.memories_checked < verdict.memories_checked, after


def test_verifying_while_rows_change_raises_no_false_alarm(service: MemoryService, operator: Caller) -> None:
    """A write may commit between verification reading a row and reading its entries: the row then
    differs from its last entry for a moment. Verification looks again before it names a fault."""
    _fact(service, operator, "value start", "busy")
    stop, written = threading.Event(), [0]

    def write() -> None:
        while not stop.is_set():  # each write supersedes the slot's current fact: two rows change
            _fact(service, operator, f"value {written[0]}", "busy")
            written[0] += 1

    writer = threading.Thread(target=write)
    writer.start()
    verdicts: list[AuditVerdict] = []
    deadline = time.monotonic() + 120
    try:  # until both sides did enough, however the two threads share the machine
        while (len(verdicts) < 20 or written[0] < 40) and time.monotonic() < deadline:
            verdicts.append(service.admin.verify_audit(operator))
    finally:
        stop.set()
        writer.join()
    assert written[0] >= 40 and len(verdicts) >= 20, (written, len(verdicts))  # rows changed while verified
    assert [v for v in verdicts if not v.verified] == []
