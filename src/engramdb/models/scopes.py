"""The scopes of a tenant that hold memories, as a key may name them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from engramdb.models.base import QueryModel, ResponseModel, ScopeView


class ScopeListQuery(QueryModel):
    """Which scopes to list."""

    scope_key: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="only the scope with this digest (as audit entries show it)"
    )
    limit: int = Field(200, ge=1, le=1000, description="at most this many scopes (1-1000)")
    order: Literal["recent", "key"] = Field(
        "recent",
        description="recent: most recently written first (a scope written while you page moves to the front, "
        "and later pages do not list it); key: by scope key, an order no write changes (a walk lists every "
        "scope once)",
    )
    cursor: str | None = Field(None, max_length=200, description="nextCursor of the previous page (same order)")


class ScopeSummary(ScopeView):
    """A scope, its digest and what it holds."""

    scope_key: str = Field(description="the scope's digest (audit entries name a scope by it)")
    episodes: int = Field(description="episodes stored in it, retired ones included")
    facts: int = Field(description="facts stored in it, every status included")
    pending: int = Field(description="facts awaiting review")
    last_recorded_at: str = Field(description="when a memory was last stored in it")


class ScopeList(ResponseModel):
    """Scopes of the caller's tenant within the key's grant, most recently written first."""

    scopes: list[ScopeSummary] = Field(description="the scopes, most recently written first")
    next_cursor: str | None = Field(None, description="pass as ?cursor= for the next page; absent on the last")


class ScopeResolution(ResponseModel):
    """Who the key is, and the scope a request naming these fields would act in."""

    tenant: str = Field(description="the key's tenant")
    key_id: str = Field(description="the key's id")
    role: str = Field(description="agent, host, reviewer or admin")
    grant: dict[str, Any] = Field(description="the scope fields the key fixes")
    scope: dict[str, Any] = Field(
        description="the grant plus the fields named, a userId replaced by its participantScopeHash"
    )
    participant_scope_hash: str | None = Field(None, description="the participant's hash, when known")
    complete: bool = Field(description="true when all five scope fields are known: a write could use them as is")
