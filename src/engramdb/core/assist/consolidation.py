"""Consolidation: near-duplicate current facts of one slot merged into one, and its undoing.

Groups are current facts of origin ``stated`` (a derived fact is never the basis of another
derivation) of one subject and kind whose vectors are at least ``similarity`` alike. The model
says whether each group says one thing and writes the merged sentence; the merged fact is
``derived`` and goes through the lifecycle. Once it is current the originals are retired
(superseded, reason ``consolidated into <id>``, values not tombstoned), with a CONSOLIDATES link
to each; while it waits for review they stay current and the links are ``proposed``. Undoing
archives the merged fact and makes the originals current again; all of it is audited.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from engramdb import clock
from engramdb.contract.canonical import sha256_hex
from engramdb.core import decisions
from engramdb.core import facts as lifecycle
from engramdb.core.assist import links, writing
from engramdb.core.assist.extraction import Candidate, Turn
from engramdb.core.assist.llm import answers, prompts
from engramdb.core.assist.work import Work
from engramdb.core.auth import Caller
from engramdb.core.policy import TenantPolicy
from engramdb.errors import ConflictError, NotFoundError
from engramdb.models.assist import DerivedItem
from engramdb.models.derive import ConsolidateRequest, ConsolidationGroup
from engramdb.storage.port import CandidateFilter, MemoryRecord, Transaction

CONSOLIDATE = prompts.load("consolidate", answers.envelope("groups", answers.MergeItem), answers.items_under("groups"))
_TRUST_ORDER = ("untrusted", "mixed", "trusted")


def groups(work: Work, body: ConsolidateRequest) -> list[list[MemoryRecord]]:
    """Near-duplicate current, stated facts, grouped by slot and similarity, largest groups first."""
    current = work.tenant.list_facts(
        work.scope_key,
        subject_key=body.subject_key,
        kind=body.kind,
        below=None,
        limit=5000,
        filt=CandidateFilter(statuses=("active",), sources=("MEMORY_FACT",), expires_after=clock.now_text()),
    )
    slots: dict[tuple[str | None, str | None], list[MemoryRecord]] = defaultdict(list)
    for fact in current:
        if fact.origin == "stated":
            slots[(fact.subject_key, fact.kind)].append(fact)
    found = [g for slot in slots.values() if len(slot) > 1 for g in _similar(work, slot, body.similarity)]
    return sorted(found, key=lambda g: (-len(g), g[0].recorded_at))[: body.max_groups]


def _similar(work: Work, slot: list[MemoryRecord], similarity: float) -> list[list[MemoryRecord]]:
    vectors = np.asarray(work.embedder.embed([f.text for f in slot]), dtype=np.float32)
    close = (vectors @ vectors.T) >= similarity
    parent = list(range(len(slot)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(close, k=1)), strict=True):
        parent[root(int(i))] = root(int(j))
    members: dict[int, list[MemoryRecord]] = defaultdict(list)
    for index, fact in enumerate(slot):
        members[root(index)].append(fact)
    return [sorted(g, key=lambda f: f.recorded_at) for g in members.values() if len(g) > 1]


def consolidate(work: Work, found: list[list[MemoryRecord]], dry_run: bool) -> list[ConsolidationGroup]:
    """Ask the model about each group; merge those it says are one (unless ``dry_run``)."""
    data = {
        "groups": [
            {
                "group": i,
                "subjectKey": g[0].subject_key,
                "kind": g[0].kind,
                "facts": [{"text": f.text, "validFrom": f.valid_from} for f in g],
            }
            for i, g in enumerate(found)
        ]
    }
    good, _ = answers.read_items(answers.MergeItem, work.ask(CONSOLIDATE, data))
    said = {item.group: item for _, item in good if item.group < len(found)}
    results: list[ConsolidationGroup] = []
    merging: list[tuple[int, Candidate]] = []
    for index, group in enumerate(found):
        item = said.get(index)
        base = ConsolidationGroup(
            fact_ids=[f.memory_id for f in group],
            subject_key=group[0].subject_key or "",
            kind=group[0].kind or "",
            action="skipped",
            reason="the model gave no usable answer for this group",
        )
        if item is None or not item.merge or not item.text.strip():
            kept = {"action": "kept", "reason": item.reason or "the model says these facts differ"} if item else {}
            results.append(base.model_copy(update=kept))
            continue
        candidate = _candidate(group, item)
        if dry_run:
            results.append(
                base.model_copy(
                    update={
                        "action": "would_merge",
                        "reason": item.reason or "near-duplicates",
                        "merged": candidate.item("skipped", "dry run: nothing written"),
                    }
                )
            )
            continue
        results.append(base.model_copy(update={"action": "merged", "reason": item.reason or "near-duplicates"}))
        merging.append((len(results) - 1, candidate))
    written = writing.write(work, [c for _, c in merging], (CONSOLIDATE.version,), then=_retire_or_propose(work))
    for (slot, _), made in zip(merging, written, strict=True):
        action = {"parked": "proposed", "created": "merged"}.get(made.action, "skipped")
        why = results[slot].reason if action != "skipped" else f"the merged fact was {made.action}: {made.reason}"
        results[slot] = results[slot].model_copy(update={"action": action, "merged": made, "reason": why})
    return results


def _candidate(group: list[MemoryRecord], item: answers.MergeItem) -> Candidate:
    ids = sorted(f.memory_id for f in group)
    trust = min((f.trust_class for f in group), key=_TRUST_ORDER.index)
    turn = Turn(f"consolidate:{sha256_hex(','.join(ids))[:32]}", "", "", min(f.valid_from or "" for f in group), trust)
    return Candidate(
        turn,
        group[0].subject_key or "",
        group[0].kind or "",
        " ".join(item.text.split()),
        item.confidence,
        evidence=group,
    )


def _retire_or_propose(work: Work) -> writing.Then:
    def act(tx: Transaction, candidate: Candidate, item: DerivedItem) -> None:
        action, fact_id = item.action, item.fact_id
        if fact_id is None or action not in ("created", "parked"):
            return
        now = clock.now_text()
        for original in candidate.evidence:
            state = "proposed" if action == "parked" else "applied"
            links.record_link(
                tx,
                scope_key=work.scope_key,
                link_type=links.CONSOLIDATES,
                from_id=fact_id,
                to_id=original.memory_id,
                state=state,
                at=now,
                reason="near-duplicate of its group",
                prompt_version=CONSOLIDATE.version,
                model=work.chat.model,
            )
            if state == "applied":
                current = tx.get_memory(work.scope_key, "MEMORY_FACT", original.memory_id)
                if current is not None and current.status == "active":
                    links.retire_consolidated(tx, work.caller, current, fact_id, now)

    return act


def undo(
    tx: Transaction, caller: Caller, policy: TenantPolicy, scope_key: str, fact_id: str, reason: str
) -> tuple[MemoryRecord, list[MemoryRecord]]:
    """Archive a merged fact and make its originals current again; return both."""
    merged = tx.get_memory(scope_key, "MEMORY_FACT", fact_id)
    if merged is None:
        raise NotFoundError(f"no fact {fact_id} in this scope", id=fact_id)
    merges = [link for link in tx.links_from(scope_key, fact_id, ("applied",)) if link.link_type == links.CONSOLIDATES]
    if not merges:
        hint = " (it waits for review: reject it there)" if merged.status == "pending_review" else ""
        raise ConflictError(f"fact {fact_id} merged nothing that is still merged{hint}", id=fact_id)
    if merged.status != "active":  # retracted, rejected, corrected, archived: what it merged stays behind it
        raise ConflictError(
            f"fact {fact_id} is {merged.status}: undoing its merge would bring back what it replaced",
            id=fact_id,
            status=merged.status,
        )
    now, restored = clock.now_text(), []
    for link in merges:
        original = tx.get_memory(scope_key, "MEMORY_FACT", link.to_id)
        if original is None or original.status != "superseded" or original.superseded_by_id != fact_id:
            continue
        if original.subject_key and original.kind:
            decisions.refuse_if_tombstoned(tx, original)  # a value corrected away since stays away
        if not policy.is_multi_valued(original.kind or "") and tx.active_facts(
            scope_key, original.subject_key or "", original.kind or ""
        ):
            raise ConflictError(
                f"{original.kind} holds one current value and its slot has one: fact "
                f"{original.memory_id} cannot be current again",
                id=original.memory_id,
            )
        before = lifecycle.state_digest(original)
        back = tx.restore_fact(original.rowid, reason=f"consolidation into {fact_id} undone: {reason}", at=now)
        tx.audit(
            caller.audit(
                "fact.restore",
                target_kind="MEMORY_FACT",
                target_id=back.memory_id,
                scope_key=scope_key,
                before_digest=before,
                after_digest=lifecycle.state_digest(back),
                reason=f"consolidation into {fact_id} undone: {reason}",
            )
        )
        links.set_state(tx, link, "undone", now, reason)
        restored.append(back)
    merged = lifecycle.retire(
        tx, merged, caller, status="archived", at=now, reason=f"consolidation undone: {reason}", tombstone=False
    )
    return merged, restored
