"""The scopes of a tenant that hold memories, as a key may name them."""

from __future__ import annotations

from pydantic import Field

from engramdb.models.base import QueryModel, ResponseModel, ScopeView


class ScopeListQuery(QueryModel):
    """Which scopes to list."""

    scope_key: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="only the scope with this digest (as audit entries show it)"
    )
    limit: int = Field(200, ge=1, le=1000, description="at most this many scopes (1-1000)")


class ScopeSummary(ScopeView):
    """A scope, its digest and what it holds."""

    scope_key: str = Field(description="the scope's digest (audit entries name a scope by it)")
    episodes: int = Field(description="episodes stored in it, retired ones included")
    facts: int = Field(description="facts stored in it, every status included")
    pending: int = Field(description="facts awaiting review")
    last_recorded_at: str = Field(description="when its newest memory was stored")


class ScopeList(ResponseModel):
    """Scopes of the caller's tenant within the key's grant, most recently written first."""

    scopes: list[ScopeSummary] = Field(description="the scopes, most recently written first")
