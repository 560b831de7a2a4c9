"""Model-assisted memory on the wire: extraction, the queue, verdicts, links and model usage.

Everything a model derives is written as a fact of origin ``derived`` through the same lifecycle
as any fact (the trust policy decides: by default it waits for review). What happened to each
candidate is an ``item``: its ``action`` and the ``reason`` for it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from engramdb.contract.events import DateTime, Hex64, ScopeFields, TrustClass, WireModel
from engramdb.errors import InvalidInputError
from engramdb.models.base import QueryModel, ResponseModel, ScopeQuery, ScopeView

Action = Literal["created", "updated", "parked", "history", "duplicate", "refused", "skipped"]
ACTIONS = (
    "created: current now",
    "updated: current now, and it replaced the facts in supersededFactIds",
    "parked: waiting for review",
    "history: older than the current fact, kept as history",
    "duplicate: says what a current, pending or merged fact of the scope already says (nothing written)",
    "refused: the value was corrected away before (a tombstone)",
    "skipped: not a usable fact (reason says why)",
)


class TurnInput(WireModel):
    """A turn given to extraction as text (not stored as an episode)."""

    user_text: str = Field("", max_length=16_000, description="what the user said")
    assistant_text: str = Field("", max_length=16_000, description="what the assistant answered")
    source_event_id: str | None = Field(
        None, min_length=1, max_length=256, description="the turn's id in the host (default: a digest of its text)"
    )
    observed_at: DateTime | None = Field(None, description="when it was said (default: now); facts hold from then")


class ExtractRequest(WireModel):
    """Body of ``POST /v1/extract`` and ``POST /v1/extract/queue``: one source of turns."""

    text: str | None = Field(None, min_length=1, max_length=16_000, description="one passage, read as a user turn")
    turns: list[TurnInput] | None = Field(None, min_length=1, max_length=50, description="turns given as text")
    episode_ids: list[Hex64] | None = Field(
        None, min_length=1, max_length=50, description="stored episodes of the scope (their eventIds)"
    )
    session_id: str | None = Field(
        None, min_length=1, max_length=256, description="the newest 50 stored episodes of this session"
    )
    trust_class: TrustClass = Field(
        "mixed", description="trust class of facts from text or turns (facts from episodes take the episode's)"
    )
    scope: ScopeFields | None = Field(None, description="scope fields the key does not fix")

    @model_validator(mode="after")
    def _one_source(self) -> ExtractRequest:
        given = [n for n in ("text", "turns", "episodeIds", "sessionId") if getattr(self, _snake(n)) is not None]
        if len(given) != 1:
            raise InvalidInputError(
                "give exactly one of text, turns, episodeIds or sessionId", field=given[1] if len(given) > 1 else "text"
            )
        return self


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


class VerdictView(ResponseModel):
    """A model's verdict on a candidate against one current fact, and what came of it."""

    fact_id: str = Field(description="the current fact judged against")
    verdict: str = Field(description="supersedes, refines, coexists or duplicate")
    confidence: float = Field(description="the model's confidence, 0 to 1")
    reason: str = Field(description="the model's reason")
    applied: bool = Field(description="whether it acted (a supersedes verdict: at or above the policy's threshold)")
    note: str | None = Field(None, description="why it did not act, or will act only on approval")


class DerivedItem(ResponseModel):
    """One candidate fact and what the lifecycle did with it."""

    action: Action = Field(description="; ".join(ACTIONS))
    fact_id: str | None = Field(None, description="the fact's id (absent when nothing could be written)")
    subject_key: str | None = Field(None, description="what it is about")
    kind: str | None = Field(None, description="its kind")
    text: str | None = Field(None, description="the fact")
    confidence: float | None = Field(None, description="the model's confidence")
    source_event_id: str | None = Field(None, description="the turn or facts it was derived from")
    status: str | None = Field(None, description="the fact's status after the write")
    reason: str = Field(description="why it got its action")
    superseded_fact_ids: list[str] = Field(default_factory=list, description="facts this write retired")
    verdicts: list[VerdictView] = Field(default_factory=list, description="the model's verdicts on it")


class UsageView(ResponseModel):
    """What the model calls of one request cost."""

    calls: int = Field(description="requests sent to the model (repair turns included)")
    prompt_tokens: int = Field(description="prompt tokens (the endpoint's count, else estimated)")
    completion_tokens: int = Field(description="completion tokens")
    cost: float = Field(description="in the currency of the configured prices (0 for a local model)")
    model_ms: float = Field(description="time spent waiting for the model, milliseconds")


class ExtractResult(ResponseModel):
    """What extraction and judgement made of the turns."""

    items: list[DerivedItem] = Field(description="every candidate, in the order the model proposed them")
    turns: int = Field(description="turns read")
    model: str = Field(description="the model that answered")
    prompt_versions: dict[str, str] = Field(description="prompt name -> version used (also in each fact's provenance)")
    usage: UsageView = Field(description="the model calls this took")


class AssistJobView(ResponseModel):
    """A queued extraction and its visible state."""

    job_id: str = Field(description="the job's id (the same request queued twice is one job)")
    kind: str = Field(description="what it does: extract")
    state: Literal["queued", "running", "done", "failed"] = Field(
        description="queued (waiting, or waiting to retry), running, done, or failed (after maxAttempts)"
    )
    attempts: int = Field(description="tries so far")
    max_attempts: int = Field(description="tries before it is marked failed")
    next_attempt_at: str | None = Field(None, description="when a queued job is due (a retry waits with backoff)")
    error: str | None = Field(None, description="why the last try failed")
    scope: ScopeView = Field(description="the scope it extracts into")
    input: dict[str, Any] = Field(description="what it extracts from")
    result: ExtractResult | None = Field(None, description="what it did, once done")
    created_at: str = Field(description="when it was queued")
    updated_at: str = Field(description="when its state last changed")
    started_at: str | None = Field(None, description="when its current or last try began")
    finished_at: str | None = Field(None, description="when it ended (done or failed)")
    cpu_ms: float | None = Field(None, description="CPU time its last try took in its worker (the model's time apart)")


class AssistJobQuery(ScopeQuery):
    """Which jobs to list (agent and host keys see their scopes' jobs only)."""

    state: Literal["queued", "running", "done", "failed"] | None = Field(None, description="only jobs in this state")
    limit: int = Field(50, ge=1, le=500, description="at most this many jobs, newest first")


class AssistJobList(ResponseModel):
    """Queued and finished jobs, newest first."""

    jobs: list[AssistJobView] = Field(description="the jobs, newest first")


class UsageQuery(QueryModel):
    """Which part of the ledger to sum."""

    since: DateTime | None = Field(None, description="only calls made at or after this time")
    recent: int = Field(20, ge=0, le=500, description="also list this many of the latest calls")


class PurposeUsage(ResponseModel):
    """The tenant's calls for one purpose (extract, judge, reflect, consolidate)."""

    purpose: str = Field(description="extract, judge, reflect or consolidate")
    calls: int = Field(description="requests sent")
    failed: int = Field(description="requests that failed or whose answer was not usable")
    prompt_tokens: int = Field(description="prompt tokens")
    completion_tokens: int = Field(description="completion tokens")
    cost: float = Field(description="in the currency of the configured prices")
    model_ms: float = Field(description="time spent waiting for the model, milliseconds")


class CallView(ResponseModel):
    """One request to the model."""

    at: str = Field(description="when it was sent")
    purpose: str = Field(description="extract, judge, reflect or consolidate")
    model: str = Field(description="the model")
    prompt_version: str = Field(description="the prompt's version")
    job_id: str | None = Field(None, description="the queued job it belonged to")
    actor_key_id: str | None = Field(None, description="the key whose request it served")
    prompt_tokens: int = Field(description="prompt tokens")
    completion_tokens: int = Field(description="completion tokens")
    estimated: bool = Field(description="tokens estimated from characters: the endpoint reported none")
    cost: float = Field(description="its cost")
    latency_ms: float = Field(description="how long the model took")
    outcome: str = Field(description="ok, invalid (unusable answer), timeout or error")
    error: str | None = Field(None, description="what went wrong")


class AssistUsage(ResponseModel):
    """The tenant's model calls: totals per purpose, the latest calls, the queue."""

    configured: bool = Field(description="whether a chat model is configured on this server")
    model: str | None = Field(None, description="the configured model")
    by_purpose: list[PurposeUsage] = Field(description="totals per purpose")
    total: PurposeUsage = Field(description="totals over every purpose")
    recent: list[CallView] = Field(description="the latest calls, newest first")
    jobs: dict[str, int] = Field(description="queued jobs by state (among the latest 500)")


class LinkView(ResponseModel):
    """A link a model's work made between two memories of one scope."""

    link_type: str = Field(description="SUPERSEDES, REFINES, COEXISTS, CONSOLIDATES or DERIVED_FROM")
    from_id: str = Field(description="the fact derived or judged")
    to_id: str = Field(description="the fact or episode it points at")
    to_source: str = Field(description="MEMORY_FACT or EPISODE")
    state: str = Field(
        description="applied; proposed (acts when the fact it comes from is approved); refused (below the "
        "threshold, or the age guard); rejected (its fact was rejected); undone"
    )
    verdict: str | None = Field(None, description="the model's verdict, as said")
    confidence: float | None = Field(None, description="the model's confidence")
    reason: str | None = Field(None, description="the model's reason, or the server's")
    prompt_version: str | None = Field(None, description="the prompt's version")
    model: str | None = Field(None, description="the model")
    created_at: str = Field(description="when it was made")
    updated_at: str = Field(description="when its state last changed")


class FactLinks(ResponseModel):
    """Every link from or to one memory."""

    links: list[LinkView] = Field(description="the links, oldest first")
