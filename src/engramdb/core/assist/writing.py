"""Writing what a model proposed: through ``core.facts`` as origin ``derived``, in one transaction
with its links, the audit of every verdict and the ledger of the model calls it took."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engramdb import clock
from engramdb.contract.writes import FactWrite
from engramdb.core import facts
from engramdb.core.assist import links
from engramdb.core.assist.extraction import Candidate, Judged, value_of
from engramdb.core.assist.judgement import JUDGE
from engramdb.core.assist.work import Work
from engramdb.core.rows import fact_row
from engramdb.errors import ConflictError, NotFoundError
from engramdb.models.assist import DerivedItem
from engramdb.storage.port import NewMemory, Transaction

_ACTIONS = {
    "created": "created",
    "superseded": "updated",
    "parked": "parked",
    "history": "history",
    "exists": "duplicate",
    "refused": "refused",
}
_REASONS = {
    "created": "current now (the trust policy lets this trust class and origin in without review)",
    "updated": "current now, and it replaced the facts it names",
    "parked": "waiting for review",
    "history": "older than the current fact of its slot: kept as history (the age guard)",
    "duplicate": "already stored (the same subject, kind, text and source)",
    "refused": "this value was corrected away before (a tombstone of its slot)",
}


def provenance(work: Work, *versions: str) -> str:
    """What a derived fact records about its making: the prompts' versions and the model."""
    return f"engram:derived prompts={','.join(versions)} model={work.chat.model}"[:512]


def candidate_row(work: Work, candidate: Candidate, prompt_versions: tuple[str, ...]) -> NewMemory:
    """The storage row of a candidate: scope from the run (never from the model), origin derived,
    trust class from its source turn."""
    body = {
        "runtime": candidate.turn.runtime,
        "text": candidate.text,
        "kind": candidate.kind,
        "subjectKey": candidate.subject_key,
        "confidence": candidate.confidence,
        "sourceEventId": candidate.turn.source_event_id,
        "validFrom": candidate.turn.observed_at,
        "visibility": work.visibility,
        "trustClass": candidate.turn.trust_class,
        "provenance": provenance(work, *prompt_versions),
    }
    if candidate.target_id:
        body["supersedesFactId"] = candidate.target_id
    return fact_row(FactWrite.model_validate(body).to_event(work.scope), work.scope, clock.now_text(), "derived")


Then = Callable[[Transaction, Candidate, DerivedItem], None]


def write(
    work: Work, candidates: list[Candidate], prompt_versions: tuple[str, ...], then: Then | None = None
) -> list[DerivedItem]:
    """Write every candidate in one transaction (``then`` runs after each, in it); record the model
    calls in it too."""
    items = []
    with work.tenant.transaction() as tx:
        for candidate in candidates:
            item = _write_one(work, tx, candidate, prompt_versions)
            if then is not None:
                then(tx, candidate, item)
            items.append(item)
        tx.record_calls(work.ledger())
    work.recorded = True
    _keep_vectors(work, candidates, items)
    return items


def _keep_vectors(work: Work, candidates: list[Candidate], items: list[DerivedItem]) -> None:
    """The facts just written get the vectors judgement already computed for their texts: the
    embedding worker has nothing left to do for them (the vector arm finds them at once)."""
    written = [
        (c, i)
        for c, i in zip(candidates, items, strict=True)
        if c.vector is not None and i.fact_id and i.action in ("created", "updated", "parked", "history")
    ]
    rows = [work.tenant.get_memory(work.scope_key, "MEMORY_FACT", i.fact_id or "") for _, i in written]
    kept = [
        (row.rowid, c.vector, c.text)  # a fact's text is what its vector embeds (core/rows.py)
        for (c, _), row in zip(written, rows, strict=True)
        if c.vector is not None and row is not None and row.embed_state != "ready" and row.text == c.text
    ]
    if kept:  # each only where its row still holds that text (a rowid freed by a delete is taken again)
        vectors = np.stack([v for _, v, _ in kept])
        work.tenant.save_embeddings(
            [r for r, _, _ in kept], vectors, work.embedder.model_id, texts=[t for *_, t in kept]
        )


def _write_one(work: Work, tx: Transaction, candidate: Candidate, versions: tuple[str, ...]) -> DerivedItem:
    if candidate.duplicate_of is not None:
        _audit_verdicts(work, tx, candidate, None, "duplicate")
        same = candidate.duplicate_of
        return candidate.item(
            "duplicate", f"fact {same.memory_id} says the same", fact_id=same.memory_id, status=same.status
        )
    if candidate.target_id:
        target = tx.get_memory(work.scope_key, "MEMORY_FACT", candidate.target_id)
        if target is None or target.status != "active":
            _unchoose(candidate, "the fact it would replace is no longer current")
    row = candidate_row(work, candidate, versions)
    merged = {e.memory_id for e in candidate.evidence}  # a merge may say what one of its originals says
    slot = tx.slot_facts(work.scope_key, candidate.subject_key, candidate.kind, ("active", "pending_review"))
    twin = next((f for f in slot if value_of(f.text) == candidate.value and f.memory_id not in merged), None)
    if twin is not None:  # written a moment ago by another run of this scope
        return candidate.item(
            "duplicate",
            f"fact {twin.memory_id} ({twin.status}) says the same",
            fact_id=twin.memory_id,
            status=twin.status,
        )
    try:
        result = facts.assert_fact(tx, row, work.caller, work.policy, reason=_why(work, candidate, versions))
    except (NotFoundError, ConflictError) as error:  # raised before anything of it was written
        return candidate.item("skipped", error.message)
    action = _ACTIONS[result.outcome]
    record = result.record
    _link(work, tx, candidate, row.memory_id, action)
    _audit_verdicts(work, tx, candidate, row.memory_id, action)
    reason = _REASONS[action] if record is None or action != "parked" else record.status_reason or _REASONS[action]
    if candidate.ignored:
        reason += "; " + "; ".join(candidate.ignored)
    return candidate.item(
        action,
        reason,
        fact_id=row.memory_id,
        status=record.status if record else None,
        superseded_fact_ids=[r.memory_id for r in result.superseded if r.memory_id != row.memory_id],
    )


def _unchoose(candidate: Candidate, why: str) -> None:
    for judged in candidate.judged:
        if judged.neighbour.memory_id == candidate.target_id:
            judged.acts, judged.note = False, why
    candidate.target_id = None


def _why(work: Work, candidate: Candidate, versions: tuple[str, ...]) -> str:
    why = f"derived by {work.chat.model} ({', '.join(versions)}) from {candidate.turn.source_event_id}"
    chosen = next((j for j in candidate.judged if j.neighbour.memory_id == candidate.target_id), None)
    if chosen is not None:
        why += f"; verdict supersedes {chosen.neighbour.memory_id} ({chosen.confidence:.2f}): {chosen.reason}"
    return why[:1000]


def _link_state(judged: Judged, action: str, candidate: Candidate) -> tuple[str, str | None]:
    if not judged.acts:
        return "refused", judged.note
    if judged.verdict == "supersedes" and judged.neighbour.memory_id != candidate.target_id:
        return "refused", judged.note
    if action == "parked":
        return "proposed", "acts when the fact is approved"
    if action in ("created", "updated"):
        return "applied", None
    return "refused", judged.note or f"the fact was {action}"


def _link(work: Work, tx: Transaction, candidate: Candidate, fact_id: str, action: str) -> None:
    if action in ("duplicate", "refused"):  # nothing new was written to link from
        return
    now = clock.now_text()
    for judged in candidate.judged:
        state, note = _link_state(judged, action, candidate)
        reason = f"{judged.reason} [{note}]" if note else judged.reason
        links.record_link(
            tx,
            scope_key=work.scope_key,
            link_type=links.TYPE_OF_VERDICT.get(judged.verdict, links.COEXISTS),
            from_id=fact_id,
            to_id=judged.neighbour.memory_id,
            state=state,
            at=now,
            verdict=judged.verdict,
            confidence=judged.confidence,
            reason=reason,
            prompt_version=JUDGE.version,
            model=work.chat.model,
        )


def _audit_verdicts(work: Work, tx: Transaction, candidate: Candidate, fact_id: str | None, action: str) -> None:
    """Every verdict and every ignored one in the audit log, naming the fact judged against."""
    source = fact_id or f"a candidate from {candidate.turn.source_event_id} ({action})"
    for judged in candidate.judged:
        note = f" [{judged.note}]" if judged.note else ""
        tx.audit(
            work.caller.audit(
                "model.verdict",
                target_kind="MEMORY_FACT",
                target_id=judged.neighbour.memory_id,
                scope_key=work.scope_key,
                reason=f"{judged.verdict} ({judged.confidence:.2f}) by {source}: {judged.reason}{note}; "
                f"{JUDGE.version}, {work.chat.model}"[:1000],
            )
        )
    for ignored in candidate.ignored:
        tx.audit(
            work.caller.audit(
                "model.verdict.ignored",
                target_kind="MEMORY_FACT",
                target_id=fact_id,
                scope_key=work.scope_key,
                reason=f"{source}: {ignored}"[:1000],
            )
        )
