"""Request and response shapes shared by REST, the SDK and MCP. No FastAPI or MCP imports."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from engramdb.contract.events import KeptDateTime, ScopeFields, WireModel
from engramdb.errors import InvalidInputError

if TYPE_CHECKING:  # only a type: the SDK imports these models without the storage layer
    from engramdb.storage.port import MemoryRecord

MAX_LIMIT = 50
DEFAULT_LIMIT = 8


class RecallRequest(WireModel):
    """Body of ``POST /v1/recall``."""

    query: str = Field(min_length=1, description="what to recall (at most 4,000 characters)")
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="memories to return")
    exclude_session_id: str | None = Field(None, description="leave out this session's episodes")
    # An empty list is refused, not read as "both" or "none": either way it is a client bug.
    sources: list[Literal["EPISODE", "MEMORY_FACT"]] | None = Field(
        None, min_length=1, description="only these memory types (default both; not empty)"
    )
    explain: bool = Field(False, description="return each arm's rank and each feature's share")
    as_of: KeptDateTime | None = Field(None, description="record time: what was believed then")
    valid_at: KeptDateTime | None = Field(None, description="valid time: what was true in the world then")
    include_history: bool = Field(False, description="also return retired (superseded, retracted, expired, archived) memories")
    include_pending: bool = Field(False, description="also return facts awaiting review, marked as such")
    sessions: int = Field(
        0, ge=0, le=MAX_LIMIT,
        description="also rank up to this many sessions by their best-matching episode (0 = none)",
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        # Blanks have no words for the lexical arm and embed to an arbitrary direction: whatever
        # came back would look like an answer to nothing.
        if not query.replace("\x00", "").strip():
            raise ValueError("must not be blank")
        return query


class ResponseModel(BaseModel):
    """camelCase out, lenient in (responses are built by the server or parsed by the SDK)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class EmbeddingStatus(ResponseModel):
    state: Literal["pending", "ready", "failed"]
    error: str | None = None
    attempts: int = 0


class MemoryView(ResponseModel):
    """A stored memory: the contract event as received plus what the server keeps beside it."""

    id: str
    source: Literal["EPISODE", "MEMORY_FACT"]
    status: str
    origin: str
    recorded_at: str
    active_from: str | None = None
    retired_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    invalid_at: str | None = None  # a superseded fact stops holding here: its successor's validFrom
    supersedes_fact_id: str | None = None
    superseded_by_fact_id: str | None = None
    status_reason: str | None = None
    embedding: EmbeddingStatus
    event: dict[str, Any]

    @classmethod
    def of(cls, record: MemoryRecord) -> MemoryView:
        return cls(
            id=record.memory_id,
            source=record.source,
            status=record.status,
            origin=record.origin,
            recorded_at=record.recorded_at,
            active_from=record.active_from,
            retired_at=record.retired_at,
            valid_from=record.valid_from,
            valid_until=record.valid_until,
            invalid_at=record.invalid_at,
            supersedes_fact_id=record.supersedes_id,
            superseded_by_fact_id=record.superseded_by_id,
            status_reason=record.status_reason,
            embedding=EmbeddingStatus(
                state=record.embed_state, error=record.embed_error, attempts=record.embed_attempts
            ),
            event=json.loads(record.event_json),
        )


class WriteResponse(ResponseModel):
    """Answer to an episode or fact write; ``created`` is false when it was already stored.

    ``outcome``: ``created``; ``exists`` (same id already stored); ``superseded`` (this fact
    replaced the ones in ``supersededFactIds``); ``history`` (older than the current fact: kept
    as history, not current); ``parked`` (a tombstoned value held for review).
    """

    id: str
    created: bool
    outcome: str = "created"
    superseded_fact_ids: list[str] = Field(default_factory=list)
    memory: MemoryView


class CorrectRequest(WireModel):
    """Body of ``POST /v1/facts/{factId}/correct``: the new value and why."""

    text: str = Field(min_length=1, max_length=4_000)
    reason: str = Field(min_length=1, max_length=1_000)
    scope: ScopeFields | None = None
    valid_from: KeptDateTime | None = Field(None, description="default: the corrected fact's validFrom")
    confidence: float | None = Field(None, ge=0, le=1)
    source_event_id: str | None = Field(None, min_length=1, max_length=256)


class RetractRequest(WireModel):
    """Body of ``POST /v1/facts/{factId}/retract`` and of a tombstone lift."""

    reason: str = Field(min_length=1, max_length=1_000)
    scope: ScopeFields | None = None


class LiftRequest(WireModel):
    reason: str = Field(min_length=1, max_length=1_000)


class TombstoneView(ResponseModel):
    tombstone_id: str
    subject_key: str
    kind: str
    value_hash: str
    fact_id: str | None = None
    reason: str | None = None
    created_at: str
    lifted_at: str | None = None
    lift_reason: str | None = None


class FactHistory(ResponseModel):
    """Every linked version of a fact, oldest first, with the slot's tombstones."""

    versions: list[MemoryView]
    tombstones: list[TombstoneView]


class TombstoneList(ResponseModel):
    tombstones: list[TombstoneView]


class AuditView(ResponseModel):
    seq: int
    at: str
    action: str
    actor_key_id: str | None = None
    actor_role: str | None = None
    target_kind: str | None = None
    target_id: str | None = None
    scope_key: str | None = None
    before_digest: str | None = None
    after_digest: str | None = None
    reason: str | None = None
    prev_hash: str
    hash: str


class AuditPage(ResponseModel):
    entries: list[AuditView]
    next_after: int | None = Field(None, description="pass as ?after= for the next page")


class ArmExplain(ResponseModel):
    rank: int
    raw: float
    contribution: float
    weight: float = Field(
        description="the arm's share of the fusion for this query (the lexical arm's shrinks when the "
        "query's informative words are in no memory of the scope)"
    )


class Explain(ResponseModel):
    """Why a memory ranked where it did: each arm and each feature's share of the score."""

    arms: dict[str, ArmExplain]
    features: dict[str, float]
    total: float


class RecalledMemory(ResponseModel):
    id: str
    source: Literal["EPISODE", "MEMORY_FACT"]
    text: str
    score: float
    trust_class: str
    status: str
    origin: str
    confidence: float
    observed_at: str
    recorded_at: str
    session_id: str | None = None
    subject_key: str | None = None
    kind: str | None = None
    embedding_state: str
    explain: Explain | None = None


class RecalledSession(ResponseModel):
    """A session ranked by its best-matching episode (``externalSessionId``)."""

    session_id: str
    score: float
    memory_ids: list[str] = Field(description="its matching episodes, best first (at most 10)")


class RecallResponse(ResponseModel):
    memories: list[RecalledMemory]
    sessions: list[RecalledSession] | None = Field(None, description="present when the request asked for sessions")
    context: str = Field(description="the untrusted-context block to paste into a prompt")
    timings: dict[str, float] = Field(default_factory=dict)


class FactList(ResponseModel):
    facts: list[MemoryView]


class KeyCreateRequest(WireModel):
    """Body of ``POST /v1/keys`` (admin keys only)."""

    role: Literal["agent", "host", "reviewer", "admin"]
    grant: ScopeFields = Field(default_factory=ScopeFields)
    label: str | None = Field(None, max_length=200)


class KeyView(ResponseModel):
    key_id: str
    role: str
    grant: dict[str, Any]
    label: str | None = None
    created_at: str
    revoked_at: str | None = None


class KeyCreated(KeyView):
    key: str = Field(description="the bearer token; shown once, stored only as a hash")


class KeyList(ResponseModel):
    keys: list[KeyView]


class Health(ResponseModel):
    status: Literal["ok"]
    version: str
    embedder: str
    storage: str


class ReviewItem(ResponseModel):
    """A fact awaiting review, with the scope it belongs to."""

    fact: MemoryView
    scope: dict[str, Any]


class ReviewQueue(ResponseModel):
    items: list[ReviewItem]


class ReviewDecision(WireModel):
    """Body of approve (and, with a required reason, of reject); ``scope`` picks the fact when
    its id exists in two scopes."""

    reason: str | None = Field(None, max_length=1_000)
    scope: ScopeFields | None = None


class RejectDecision(ReviewDecision):
    """Body of reject: the reason is required, since it stays with the value's tombstone."""

    reason: str = Field(min_length=1, max_length=1_000)

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, reason: str) -> str:
        if not reason.replace("\x00", "").strip():
            raise InvalidInputError("reason must not be blank: say why the fact is rejected", field="reason")
        return reason


class EditAndApprove(WireModel):
    """Body of edit-and-approve: the reviewer's corrected text replaces the pending one."""

    text: str = Field(min_length=1, max_length=4_000)
    reason: str | None = Field(None, max_length=1_000)
    scope: ScopeFields | None = None


class EpisodeBatch(BaseModel):
    """Body of ``POST /v1/episodes/batch``: items are validated one by one by the server."""

    episodes: list[dict[str, Any]] = Field(max_length=100, description="episode write bodies (at most 100)")


class EpisodeBatchResult(ResponseModel):
    """One entry per item, in order: ``status`` (201, 200 or the error's) and its body."""

    results: list[dict[str, Any]]
