"""Episodes and facts as stored, written and listed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from engramdb.contract.events import ScopeFields, WireModel
from engramdb.models.base import KeptDateTime, QueryModel, ResponseModel, ScopeQuery

Source = Literal["EPISODE", "MEMORY_FACT"]
Origin = Literal["stated", "derived"]


class EmbeddingStatus(ResponseModel):
    """Whether the memory's vector is ready (the lexical arm finds it either way)."""

    state: Literal["pending", "ready", "failed", "stale"] = Field(
        description="pending (being embedded), ready (the vector arm ranks it), failed (retried with backoff) or "
        "stale (embedded by another model: found by words only until `engram reembed`)"
    )
    error: str | None = Field(None, description="why the last attempt failed")
    model: str | None = Field(None, description="the model its vector came from")
    attempts: int = Field(0, description="embedding attempts so far")


class MemoryView(ResponseModel):
    """A stored memory: the contract event as received plus what the server keeps beside it."""

    id: str = Field(description="the eventId of an episode or the factId of a fact")
    source: Source = Field(description="EPISODE or MEMORY_FACT")
    status: str = Field(description="active, pending_review, superseded, retracted, expired, archived or rejected")
    origin: str = Field(description="stated (the host said it) or derived (a model wrote it)")
    recorded_at: str = Field(description="record time: when the store learned it")
    active_from: str | None = Field(None, description="record time it became current (absent while never current)")
    retired_at: str | None = Field(None, description="record time it stopped being current")
    valid_from: str | None = Field(None, description="valid time: when the claim starts holding (facts)")
    valid_until: str | None = Field(None, description="valid time: when the claim stops holding, as written")
    invalid_at: str | None = Field(
        None, description="valid time a successor holds from: where a superseded fact stops holding"
    )
    supersedes_fact_id: str | None = Field(None, description="the fact this one replaced")
    superseded_by_fact_id: str | None = Field(None, description="the fact that replaced this one")
    status_reason: str | None = Field(None, description="why it has its status (e.g. why it waits for review)")
    pinned: bool | None = Field(None, description="true when a person pinned it (never archived); absent otherwise")
    importance: float | None = Field(None, description="0-1, when a person set it (absent: the source's prior)")
    embedding: EmbeddingStatus = Field(description="the state of its vector")
    event: dict[str, Any] = Field(description="the AgentMemoryEvent v1 as stored, scope and id included")


class WriteResponse(ResponseModel):
    """Answer to an episode or fact write; ``created`` is false when it was already stored."""

    id: str = Field(description="the stored memory's id")
    created: bool = Field(description="false when the same id was already stored (nothing changed)")
    outcome: str = Field(
        "created",
        description="created; exists (same id already stored); superseded (it replaced "
        "supersededFactIds); history (older than the current fact: kept, not current); parked "
        "(waiting for review: memory.statusReason says why)",
    )
    superseded_fact_ids: list[str] = Field(default_factory=list, description="facts this write retired")
    memory: MemoryView = Field(description="the memory as stored")
    extraction_job_id: str | None = Field(
        None, description="the extraction job an episode written with extract=true queued (GET /v1/assist/jobs/{id})"
    )


class EpisodeBatch(WireModel):
    """Body of ``POST /v1/episodes/batch``: items are validated one by one by the server."""

    episodes: list[dict[str, Any]] = Field(
        max_length=100, description="episode write bodies, as POST /v1/episodes takes them (at most 100)"
    )
    scope: ScopeFields | None = Field(None, description="scope fields for every episode that does not name them")


class EpisodeBatchResult(ResponseModel):
    """One entry per item, in order: ``status`` (201, 200 or the error's) and its body."""

    results: list[dict[str, Any]] = Field(
        description="per item: status plus the write's answer (id, created, outcome, memory) or the "
        "problem JSON (code, message, field)"
    )


class FactList(ResponseModel):
    """A page of a scope's facts, newest first."""

    facts: list[MemoryView] = Field(description="the facts, newest recorded first")
    next_cursor: str | None = Field(None, description="pass as ?cursor= for the next page; absent on the last")


class EpisodeList(ResponseModel):
    """A page of a scope's episodes, newest first."""

    episodes: list[MemoryView] = Field(description="the episodes, newest observedAt first")
    next_cursor: str | None = Field(None, description="pass as ?cursor= for the next page; absent on the last")
    total: int | None = Field(None, description="how many episodes the filters match on every page (asked with count)")


class EpisodeOptions(QueryModel):
    """How an episode is being written."""

    extract: bool = Field(
        False,
        description="also queue an extraction of facts from it, in the same transaction (needs a model: "
        "501 otherwise, and nothing is written); the job runs in the background, never on this write's path",
    )


class BatchOptions(QueryModel):
    """How a batch of episodes is being written."""

    extract: bool = Field(
        False,
        description="also queue extractions of facts from the episodes it creates, in the same transaction (one "
        "job per scope and 50 episodes; needs a model: 501 otherwise, and nothing is written)",
    )
    dry_run: bool = Field(
        False, description="answer what would be written (201) and what is stored already (200); write nothing"
    )


class WriteOptions(QueryModel):
    """How a fact is being written."""

    origin: Origin | None = Field(
        None,
        description="derived when a model wrote it (the trust policy then applies; default stated, "
        "and for a correction the corrected fact's origin)",
    )


class FactQuery(ScopeQuery):
    """Which facts to list: current ones by default, or as they stood at a time."""

    subject_key: str | None = Field(None, max_length=256, description="only facts about this subject")
    kind: str | None = Field(None, max_length=64, description="only facts of this kind")
    limit: int = Field(100, ge=1, le=1000, description="at most this many facts (1-1000)")
    as_of: KeptDateTime | None = Field(None, description="record time: the facts as believed then")
    valid_at: KeptDateTime | None = Field(None, description="valid time: the facts that held then")
    include_history: bool = Field(False, description="also list retired versions, each marked")
    include_pending: bool = Field(False, description="also list current facts awaiting review, marked as such")
    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page")


class EpisodeQuery(ScopeQuery):
    """Which episodes to list, newest first (by observedAt, then write order)."""

    session_id: str | None = Field(None, max_length=256, description="only this session's episodes (externalSessionId)")
    after: KeptDateTime | None = Field(None, description="only episodes observed at or after this time")
    before: KeptDateTime | None = Field(None, description="only episodes observed before this time")
    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page")
    limit: int = Field(50, ge=1, le=1000, description="at most this many episodes (1-1000)")
    count: bool = Field(False, description="also answer total: how many episodes the filters match")


class MemoryQuery(ScopeQuery):
    """The scope a read of one memory names (fields the key does not fix)."""
