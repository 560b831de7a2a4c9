"""Memory that ages: a person's marks (pin, importance), restoring what was archived, and the jobs."""

from __future__ import annotations

from pydantic import Field

from engramdb.contract.events import ScopeFields, WireModel
from engramdb.models.base import ResponseModel
from engramdb.models.memories import MemoryView

_SCOPE = "scope fields the key does not fix (to name the memory's scope)"


class MarkRequest(WireModel):
    """Body of ``POST /v1/{facts|episodes}/{id}/mark``: what a person says of a memory."""

    pinned: bool | None = Field(None, description="pinned memories are never archived (facts only)")
    importance: float | None = Field(
        None,
        ge=0,
        le=1,
        description="0-1; at the policy's protectImportance (default 0.8) or above it is never archived",
    )
    reason: str | None = Field(None, max_length=1_000, description="why (audited)")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class ArchiveRequest(WireModel):
    """Body of ``POST /v1/{facts|episodes}/{id}/archive``: a person takes a memory out of recall."""

    reason: str = Field(min_length=1, max_length=1_000, description="why it leaves recall (audited)")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class RestoreRequest(WireModel):
    """Body of ``POST /v1/{facts|episodes}/{id}/restore``."""

    reason: str | None = Field(None, max_length=1_000, description="why it is current again (audited)")
    scope: ScopeFields | None = Field(None, description=_SCOPE)


class MemoryMarks(ResponseModel):
    """A memory with the marks aging reads."""

    memory: MemoryView = Field(description="the memory")
    pinned: bool = Field(description="never archived")
    importance: float | None = Field(None, description="set by a person (none: the source's prior)")


class JobView(ResponseModel):
    """One background job: when it ran, when it runs next, what it did."""

    name: str = Field(description="aging (archive, retention) or usage (recall counts)")
    interval_seconds: float = Field(description="how often it runs")
    runs: int = Field(description="runs since the server started")
    last_run_at: str | None = Field(None, description="when the last run started")
    next_run_at: str = Field(description="when the next run is due")
    last_duration_ms: float | None = Field(None, description="how long the last run took")
    counts: dict[str, int] = Field(default_factory=dict, description="what the last run did (archived, erased, ...)")
    last_error: str | None = Field(None, description="the last run's error, if it failed")


class JobList(ResponseModel):
    """The server's background jobs."""

    jobs: list[JobView] = Field(description="every job, by name")


class AgingRun(ResponseModel):
    """What one aging sweep of the caller's tenant did."""

    weighed: int = Field(description="active memories old enough to be weighed")
    archived: int = Field(description="memories archived (weak and old, not pinned or protected)")
    erased_episodes: int = Field(description="episodes erased: older than the retention policy keeps them")
    erased_facts: int = Field(description="facts erased: older than the retention policy keeps them")
