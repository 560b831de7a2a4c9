"""Derivations over stored facts (reflection, consolidation and its undoing) and the Mem0-style
``add``: messages in, episodes stored, facts extracted and judged."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engramdb.contract.events import DateTime, Hex64, ScopeFields, TrustClass, WireModel
from engramdb.models.assist import DerivedItem, UsageView
from engramdb.models.base import ResponseModel, ScopeQuery
from engramdb.models.memories import MemoryView


class ReflectRequest(WireModel):
    """Body of ``POST /v1/reflect``: the evidence to reflect on (current, stated facts only)."""

    subject_key: str | None = Field(None, min_length=1, max_length=256, description="only facts about this subject")
    after: DateTime | None = Field(None, description="only facts that hold from this time on (validFrom)")
    before: DateTime | None = Field(None, description="only facts that hold from before this time")
    fact_ids: list[Hex64] | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="exactly these facts (each must be current and stated: a derived fact is never evidence)",
    )
    limit: int = Field(30, ge=2, le=100, description="evidence facts shown to the model at most (newest first)")
    max_reflections: int = Field(3, ge=1, le=10, description="reflections asked for at most")
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")


class ReflectResult(ResponseModel):
    """The reflections written (derived, so they wait for review by default), and their evidence."""

    items: list[DerivedItem] = Field(description="each reflection and what the lifecycle did with it")
    evidence_fact_ids: list[str] = Field(description="the facts shown to the model")
    model: str | None = Field(None, description="the model that answered (absent when there was no evidence)")
    prompt_version: str | None = Field(None, description="the reflection prompt's version")
    usage: UsageView = Field(description="the model calls this took")


class ConsolidateRequest(WireModel):
    """Body of ``POST /v1/consolidate``: where to look for near-duplicates."""

    subject_key: str | None = Field(None, min_length=1, max_length=256, description="only facts about this subject")
    kind: str | None = Field(None, min_length=1, max_length=64, description="only facts of this kind")
    similarity: float = Field(
        0.85, ge=0.5, le=1.0, description="cosine similarity at which two facts of one slot count as near-duplicates"
    )
    max_groups: int = Field(10, ge=1, le=50, description="groups asked about at most")
    dry_run: bool = Field(False, description="only say what the groups are and what the model would merge")
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")


class ConsolidationGroup(ResponseModel):
    """Near-duplicates of one slot and what became of them."""

    fact_ids: list[str] = Field(description="the current, stated facts of the group")
    subject_key: str = Field(description="their subject")
    kind: str = Field(description="their kind")
    action: Literal["merged", "proposed", "kept", "would_merge", "skipped"] = Field(
        description="merged (the originals are retired as consolidated); proposed (the merged fact waits for review; "
        "the originals stay current until it is approved); kept (the model says they differ); would_merge (dry "
        "run); skipped (reason says why)"
    )
    merged: DerivedItem | None = Field(None, description="the merged fact")
    reason: str = Field(description="why")


class ConsolidateResult(ResponseModel):
    """Groups of near-duplicates found and what was done with each."""

    groups: list[ConsolidationGroup] = Field(description="the groups, largest first")
    model: str | None = Field(None, description="the model that answered (absent when no group was found)")
    prompt_version: str | None = Field(None, description="the consolidation prompt's version")
    usage: UsageView = Field(description="the model calls this took")


class UndoConsolidation(WireModel):
    """Body of ``POST /v1/facts/{factId}/unconsolidate``."""

    reason: str = Field(min_length=1, max_length=1_000, description="why the merge is undone")
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")


class UndoneConsolidation(ResponseModel):
    """The merged fact, archived, and the originals, current again."""

    merged: MemoryView = Field(description="the merged fact, now archived")
    restored: list[MemoryView] = Field(description="the originals, current again")


class Message(WireModel):
    """One chat message, as chat APIs carry them."""

    role: Literal["user", "assistant", "system", "tool"] = Field(
        description="user and assistant turns are stored; system and tool messages are not memory"
    )
    content: str = Field(max_length=16_000, description="its text")


class AddRequest(WireModel):
    """Body of ``POST /v1/memories``: a conversation, as a list of chat messages."""

    messages: list[Message] = Field(min_length=1, max_length=100, description="the messages, oldest first")
    observed_at: DateTime | None = Field(None, description="when the conversation happened (default: now)")
    trust_class: TrustClass = Field("mixed", description="how far the host trusts the conversation")


class AddOptions(ScopeQuery):
    """How ``add`` treats the messages."""

    infer: bool = Field(
        True,
        description="extract facts and judge them against the current ones (needs a model); false stores "
        "the episodes only",
    )
    session_id: str | None = Field(None, min_length=1, max_length=256, description="the conversation's id")


class AddResult(ResponseModel):
    """What ``add`` stored and derived, grouped as Mem0 reports it, each with its reason."""

    episodes: list[str] = Field(description="eventIds of the episodes stored (one per user/assistant pair)")
    created: list[DerivedItem] = Field(description="facts that are current now")
    updated: list[DerivedItem] = Field(description="facts that are current now and replaced others")
    parked: list[DerivedItem] = Field(description="facts waiting for review")
    skipped: list[DerivedItem] = Field(
        description="candidates nothing current came of: duplicates, refused values, history, unusable ones"
    )
    usage: UsageView | None = Field(None, description="the model calls this took (absent without infer)")
