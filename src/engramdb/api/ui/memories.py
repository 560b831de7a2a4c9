"""The Memories page: a scope's episodes and facts, filtered, up to 10,000 episodes a page."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import Scopes, call, part, render, replace_url, scopes
from engramdb.core.auth import Caller
from engramdb.models.memories import MemoryView

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
PAGE_SIZES = (50, 200, 1000, 10_000)
FACTS_MAX = 1000  # list_facts answers at most this many; episodes are read a cursor page at a time


class Filters(BaseModel):
    """The Memories page's filters, as its query string names them."""

    scope: str | None = None
    show: Literal["both", "facts", "episodes"] = "both"
    kind: str | None = None
    subject: str | None = None
    session: str | None = None
    after: str | None = Field(None, description="episodes observed at or after (UTC)")
    before: str | None = Field(None, description="episodes observed before (UTC)")
    as_of: str | None = Field(None, alias="asOf")
    valid_at: str | None = Field(None, alias="validAt")
    history: bool = False
    limit: int = Field(50, ge=1, le=10_000)
    cursor: str | None = None


def utc(value: str | None) -> str | None:
    """A ``datetime-local`` value (no zone) read as UTC; anything else passes as given."""
    if not value:
        return None
    return f"{value}:00Z" if len(value) == 16 and "T" in value else value


@router.get("/ui/part/memories")
@part
def memories(request: Request, caller: Authenticated, filters: Annotated[Filters, Query()]) -> HTMLResponse:
    chosen = scopes(request, caller, filters.scope)
    facts: list[MemoryView] = []
    episodes: list[MemoryView] = []
    next_cursor: str | None = None
    if chosen.current is not None and filters.show in ("both", "facts"):
        facts = call(
            request,
            caller,
            "list_facts",
            {
                "subjectKey": filters.subject,
                "kind": filters.kind,
                "limit": min(filters.limit, FACTS_MAX),
                "asOf": utc(filters.as_of),
                "validAt": utc(filters.valid_at),
                "includeHistory": filters.history,
            },
            scope=chosen.fields(),
        ).facts
    if chosen.current is not None and filters.show in ("both", "episodes"):
        episodes, next_cursor = _episodes(request, caller, chosen, filters)
    more = request.url.include_query_params(cursor=next_cursor).query if next_cursor else None
    return render(
        request,
        "memories.html",
        headers=replace_url(request, "memories"),
        caller=caller,
        scopes=chosen,
        filters=filters,
        facts=facts,
        episodes=episodes,
        more=more,
        sizes=PAGE_SIZES,
        facts_max=FACTS_MAX,
    )


def _episodes(
    request: Request, caller: Caller, chosen: Scopes, filters: Filters
) -> tuple[list[MemoryView], str | None]:
    """Up to ``filters.limit`` episodes, read in pages of at most 1,000, and the cursor after them."""
    found: list[MemoryView] = []
    cursor = filters.cursor
    while True:
        page = call(
            request,
            caller,
            "list_episodes",
            {
                "sessionId": filters.session,
                "after": utc(filters.after),
                "before": utc(filters.before),
                "limit": min(filters.limit - len(found), 1000),
                "cursor": cursor,
            },
            scope=chosen.fields(),
        )
        found += page.episodes
        cursor = page.next_cursor
        if cursor is None or len(found) >= filters.limit:
            return found, cursor
