"""The Memories page: a scope's facts, and its episodes a window at a time.

The page shows the first window of episodes with how many match; the row after it loads the next
window (keyset paging: the cursor of the last row shown, never an offset) when it scrolls into
view or its button is pressed, until the list ends.
"""

from __future__ import annotations

from dataclasses import dataclass
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
WINDOWS = (50, 200, 1000)  # rows at a time; a larger limit (an old address) reads as the largest
FACTS_MAX = 1000  # list_facts answers at most this many a page


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
    limit: int = Field(200, ge=1, le=10_000)
    cursor: str | None = None
    facts_cursor: str | None = Field(None, alias="factsCursor", description="where the shown facts start")
    shown: int = Field(0, ge=0, description="rows the page already shows (a later window's)")

    @property
    def window(self) -> int:
        """How many episodes a window holds."""
        return min(self.limit, WINDOWS[-1])


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
    older_facts = None  # the query of the page of older facts, when there are more
    if chosen.current is not None and filters.show in ("both", "facts"):
        listing = call(
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
                "cursor": filters.facts_cursor,
            },
            scope=chosen.fields(),
        )
        facts = listing.facts
        if listing.next_cursor:
            older_facts = request.url.include_query_params(factsCursor=listing.next_cursor).query
    window = _window(request, caller, chosen, filters) if filters.show in ("both", "episodes") else None
    return render(
        request,
        "memories.html",
        headers=replace_url(request, "memories"),
        caller=caller,
        scopes=chosen,
        filters=filters,
        facts=facts,
        older_facts=older_facts,
        window=window,
        sizes=WINDOWS,
        facts_max=FACTS_MAX,
    )


@router.get("/ui/part/memories/episodes")
@part
def more_episodes(request: Request, caller: Authenticated, filters: Annotated[Filters, Query()]) -> HTMLResponse:
    """The next window of episodes: its rows and the row that loads the one after (or ends the list)."""
    chosen = scopes(request, caller, filters.scope)
    return render(request, "episode_rows.html", scopes=chosen, window=_window(request, caller, chosen, filters))


@dataclass(frozen=True)
class Window:
    """A window of episodes: its rows, how many match, and the query of the next (None: the last)."""

    episodes: list[MemoryView]
    total: int
    shown: int  # rows on the page with this window's
    size: int
    next: str | None


def _window(request: Request, caller: Caller, chosen: Scopes, filters: Filters) -> Window | None:
    """One window of episodes after ``filters.cursor``, read with one page of the listing and its count."""
    if chosen.current is None:
        return None
    values = {
        "sessionId": filters.session,
        "after": utc(filters.after),
        "before": utc(filters.before),
        "limit": filters.window,
        "cursor": filters.cursor,
        "count": True,
    }
    page = call(request, caller, "list_episodes", values, scope=chosen.fields())
    shown = filters.shown + len(page.episodes)
    following = None
    if page.next_cursor:
        following = request.url.include_query_params(cursor=page.next_cursor, shown=shown).query
    return Window(list(page.episodes), page.total or 0, shown, filters.window, following)
