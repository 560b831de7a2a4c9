"""Links between memories that a model's work made, with its verdict, reason and confidence.

This module is the one place that stores them (``model_links``); the knowledge plane lists the ones
that hold (applied or proposed) among a fact's or an episode's relationships (SUPERSEDES, REFINES,
COEXISTS, CONSOLIDATES and DERIVED_FROM are its relationship types). A link from a fact awaiting
review is ``proposed``: approval applies it (a consolidation then retires its originals),
rejection marks it ``rejected``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engramdb.contract.canonical import sha256_hex
from engramdb.core import facts
from engramdb.core.auth import Caller
from engramdb.models.knowledge import NodeView, RelationshipView
from engramdb.storage.assist.port import LinkRecord
from engramdb.storage.port import MemoryRecord, Transaction

SUPERSEDES, REFINES, COEXISTS = "SUPERSEDES", "REFINES", "COEXISTS"
CONSOLIDATES, DERIVED_FROM = "CONSOLIDATES", "DERIVED_FROM"
TYPE_OF_VERDICT = {"supersedes": SUPERSEDES, "refines": REFINES, "coexists": COEXISTS}


def link_id(scope_key: str, link_type: str, from_id: str, to_id: str) -> str:
    """A link's id: one link per (scope, type, from, to)."""
    return sha256_hex(f"{scope_key}\x1f{link_type}\x1f{from_id}\x1f{to_id}")[:32]


def record_link(
    tx: Transaction,
    *,
    scope_key: str,
    link_type: str,
    from_id: str,
    to_id: str,
    state: str,
    at: str,
    to_source: str = "MEMORY_FACT",
    verdict: str | None = None,
    confidence: float | None = None,
    reason: str | None = None,
    prompt_version: str | None = None,
    model: str | None = None,
) -> LinkRecord:
    """Store a link (or update the one between the same memories)."""
    return tx.put_link(
        LinkRecord(
            link_id=link_id(scope_key, link_type, from_id, to_id),
            scope_key=scope_key,
            link_type=link_type,
            from_id=from_id,
            to_id=to_id,
            to_source=to_source,
            state=state,
            verdict=verdict,
            confidence=confidence,
            reason=(reason or "")[:1000] or None,
            prompt_version=prompt_version,
            model=model,
            created_at=at,
            updated_at=at,
        )
    )


def set_state(tx: Transaction, link: LinkRecord, state: str, at: str, reason: str | None = None) -> LinkRecord:
    """The same link in another state (its reason kept unless a new one is given)."""
    return tx.put_link(replace(link, state=state, updated_at=at, reason=reason or link.reason))


def on_approved(
    tx: Transaction, caller: Caller, approved: MemoryRecord, *, at: str, drafts: Sequence[str] = ()
) -> None:
    """Apply the proposed links of a fact a reviewer just approved (or of the drafts it replaced)."""
    for source_id in (approved.memory_id, *drafts):
        for link in tx.links_from(approved.scope_key, source_id, ("proposed",)):
            _apply(tx, caller, approved, link, at)


def on_rejected(tx: Transaction, rejected: MemoryRecord, *, at: str) -> None:
    """A rejected fact's proposed links never act."""
    for link in tx.links_from(rejected.scope_key, rejected.memory_id, ("proposed",)):
        set_state(tx, link, "rejected", at)


def _apply(tx: Transaction, caller: Caller, approved: MemoryRecord, link: LinkRecord, at: str) -> None:
    if approved.status != "active":  # approved, but the age guard kept it as history
        set_state(tx, link, "refused", at, f"{link.reason or ''} [not applied: {approved.status_reason}]".strip())
        return
    if link.link_type == CONSOLIDATES:
        original = tx.get_memory(approved.scope_key, "MEMORY_FACT", link.to_id)
        if original is None or original.status != "active":
            state = original.status if original else "missing"
            set_state(tx, link, "refused", at, f"the original was no longer current ({state})")
            return
        retire_consolidated(tx, caller, original, approved.memory_id, at)
    elif link.link_type == SUPERSEDES:
        target = tx.get_memory(approved.scope_key, "MEMORY_FACT", link.to_id)
        if target is None or target.superseded_by_id != approved.memory_id:
            set_state(tx, link, "refused", at, f"{link.reason or ''} [the fact was not superseded]".strip())
            return
    set_state(tx, link, "applied", at)


def retire_consolidated(tx: Transaction, caller: Caller, original: MemoryRecord, merged_id: str, at: str) -> None:
    """Retire a fact merged into ``merged_id``: superseded, reason ``consolidated``, value not tombstoned
    (it was not wrong; undoing the merge makes it current again)."""
    facts.retire(
        tx,
        original,
        caller,
        status="superseded",
        at=at,
        reason=f"consolidated into {merged_id}",
        successor=merged_id,
        tombstone=False,
    )


def as_relationships(
    found: Sequence[LinkRecord], node_id: str, *, type: str | None, direction: str
) -> list[RelationshipView]:
    """The links of ``node_id`` that hold (applied, or proposed while their fact awaits review) as
    relationships of the knowledge plane; the verdict and its reason are the properties."""
    views = []
    for link in found:
        outgoing = link.from_id == node_id
        if link.state not in ("applied", "proposed") or type not in (None, link.link_type):
            continue
        if direction != "both" and outgoing != (direction == "out"):
            continue
        properties = {
            "by": "model",
            "state": link.state,
            "verdict": link.verdict,
            "confidence": link.confidence,
            "reason": link.reason,
            "promptVersion": link.prompt_version,
            "model": link.model,
        }
        views.append(
            RelationshipView(
                type=link.link_type,
                source=NodeView(kind="MEMORY_FACT", id=link.from_id),
                target=NodeView(kind="EPISODE" if link.to_source == "EPISODE" else "MEMORY_FACT", id=link.to_id),
                properties={k: v for k, v in properties.items() if v is not None},
                created_at=link.created_at,
            )
        )
    return views
