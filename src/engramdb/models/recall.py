"""Recall: the request, the ranked memories with their score breakdown, the context block."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from engramdb.contract.events import KeptDateTime, ScopeFields, WireModel
from engramdb.models.base import DEFAULT_LIMIT, MAX_LIMIT, ResponseModel
from engramdb.models.memories import Source

# Each recalled candidate is checked against the kinds asked for (a 100,000-kind list held a recall's
# place for 11-16 s, two of them every place of the lane): a question names a few.
MAX_KINDS = 100


class RecallRequest(WireModel):
    """Body of ``POST /v1/recall``."""

    query: str = Field(min_length=1, description="what to recall, in natural language (at most 4,000 characters)")
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="memories to return (1-50)")
    exclude_session_id: str | None = Field(None, description="leave out this session's episodes (the current one)")
    # An empty list is refused, not read as "both" or "none": either way it is a client bug.
    sources: list[Source] | None = Field(
        None, min_length=1, max_length=2, description="only these memory types (default both; not empty)"
    )
    explain: bool = Field(False, description="return each arm's rank and each feature's share of the score")
    as_of: KeptDateTime | None = Field(None, description="record time: recall what was believed then")
    valid_at: KeptDateTime | None = Field(None, description="valid time: recall what was true in the world then")
    include_history: bool = Field(
        False, description="also return retired (superseded, retracted, expired, archived) memories, marked"
    )
    include_pending: bool = Field(False, description="also return facts awaiting review, marked as such")
    include_archived: bool = Field(
        False, description="also return archived memories (they left recall by the aging policy)"
    )
    sessions: int = Field(
        0,
        ge=0,
        le=MAX_LIMIT,
        description="also rank up to this many sessions by their best-matching episode (0 = none)",
    )
    min_score: float | None = Field(
        None,
        ge=0,
        le=1,
        description="leave out memories whose relevance (absolute: the larger of their cosine with the query "
        "and the share of the query's word information they contain) is below this; e.g. 0.3",
    )
    kinds: list[str] | None = Field(
        None, min_length=1, max_length=MAX_KINDS, description=f"only facts of these kinds (1 to {MAX_KINDS})"
    )
    subject_key: str | None = Field(None, min_length=1, description="only facts about this subject")
    subject_prefix: str | None = Field(None, min_length=1, description="only facts whose subject starts with this")
    session_id: str | None = Field(None, min_length=1, description="only this session's episodes")
    after: KeptDateTime | None = Field(None, description="only memories observed (facts: valid from) at or after this")
    before: KeptDateTime | None = Field(None, description="only memories observed (facts: valid from) before this")
    expand: int | None = Field(
        None,
        ge=0,
        le=10,
        description="follow relationships one hop from this many top hits: a fact's episode, an episode's "
        "facts, linked records (default: the server's retrieval.expandTop; 0 = off)",
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        # Blanks have no words for the lexical arm and embed to an arbitrary direction: whatever
        # came back would look like an answer to nothing.
        if not query.replace("\x00", "").strip():
            raise ValueError("must not be blank")
        return query


class ArmExplain(ResponseModel):
    """One retrieval arm's part in a memory's score."""

    rank: int = Field(description="the memory's rank in this arm, from 1")
    raw: float = Field(description="the arm's own score (cosine, or BM25)")
    contribution: float = Field(description="what the arm added to the fused score")
    weight: float = Field(
        description="the arm's share of the fusion for this query (the lexical arm's shrinks when the "
        "query's informative words are in no memory of the scope)"
    )


class Explain(ResponseModel):
    """Why a memory ranked where it did: each arm and each feature's share of the score."""

    arms: dict[str, ArmExplain] = Field(description="dense and lexical: rank, raw score, weight and contribution")
    features: dict[str, float] = Field(
        description="what each feature added: recency, confidence, importance, trust, neighbours, date, "
        "timeWords (relative time), entities (a top hit's entity), newerFirst (raised above an older statement)"
    )
    total: float = Field(description="the score: the arms' contributions plus the features'")
    replaced_by: str | None = Field(
        None, description="the id of a newer recalled memory that states another value for the same thing"
    )


class Link(ResponseModel):
    """How an expanded memory or record is linked to a top hit of the recall."""

    type: str = Field(description="the relationship's type, e.g. DERIVED_FROM or MENTIONS")
    memory_id: str = Field(description="the id of the top hit it is linked to")


class RecalledMemory(ResponseModel):
    """A memory recall returns, with the facts a reader needs to weigh it."""

    id: str = Field(description="the memory's id (eventId or factId)")
    source: Source = Field(description="EPISODE or MEMORY_FACT")
    text: str = Field(description="what the memory says (an episode: summary, then the turn)")
    score: float = Field(description="the fused score it was ranked by")
    trust_class: str = Field(description="trusted, mixed or untrusted, as the host said")
    status: str = Field(description="active, or the retired or pending status when asked for")
    origin: str = Field(description="stated (the host said it) or derived (a model wrote it)")
    confidence: float = Field(description="the writer's confidence, 0 to 1")
    observed_at: str = Field(description="when it happened (episodes) or starts holding (facts)")
    recorded_at: str = Field(description="record time: when the store learned it")
    session_id: str | None = Field(None, description="the episode's session (externalSessionId)")
    subject_key: str | None = Field(None, description="the fact's subject")
    kind: str | None = Field(None, description="the fact's kind")
    embedding_state: str = Field(
        description="pending, ready, failed or stale (another model's vector): whether the vector arm could rank it"
    )
    relevance: float = Field(
        0.0, description="absolute match with the query, 0 to 1 (what minScore compares; the score only ranks)"
    )
    explain: Explain | None = Field(None, description="the score's breakdown, when asked for")
    linked: Link | None = Field(None, description="expansion: how a top hit links to it (absent for direct hits)")
    replaced_by: str | None = Field(
        None,
        description="the id of a newer memory in this answer that states another value for the same thing "
        "(retrieval.newerFirst): this one is what was said before",
    )


class RecalledRecord(ResponseModel):
    """A record linked to a top hit (a DECISION, a TASK, an ENTITY)."""

    id: str = Field(description="the record's id")
    label: str = Field(description="its UPPER_CASE label")
    properties: dict[str, Any] = Field(description="its properties")
    origin: str = Field(description="stated (the host wrote it) or derived (a model did)")
    score: float = Field(description="its share of the linking hit's score")
    updated_at: str = Field(description="record time its properties last changed")
    linked: Link = Field(description="how a top hit links to it")


class RecalledSession(ResponseModel):
    """A session ranked by its best-matching episode (``externalSessionId``)."""

    session_id: str = Field(description="the session's externalSessionId")
    score: float = Field(description="its best episode's score")
    memory_ids: list[str] = Field(description="its matching episodes, best first (at most 10)")


class RecallResponse(ResponseModel):
    """What recall found, ranked, and the block to paste into a prompt."""

    memories: list[RecalledMemory] = Field(description="the memories, best first")
    sessions: list[RecalledSession] | None = Field(None, description="present when the request asked for sessions")
    records: list[RecalledRecord] | None = Field(
        None, description="records linked to the top hits, best first (present when recall expanded)"
    )
    context: str = Field(description="the untrusted-context block to paste into a prompt")
    timings: dict[str, float] = Field(
        default_factory=dict, description="embedMs (embedding the query) and searchMs (both arms and fusion)"
    )
