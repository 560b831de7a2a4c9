"""The Memories page (a scope's episodes and facts, filtered) and the recall playground."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from engramdb.api.routes import authenticated
from engramdb.api.ui import charts
from engramdb.api.ui.common import call, part, render, replace_url, scopes
from engramdb.core.auth import Caller

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
PAGE_SIZES = (50, 200, 1000)


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
    limit: int = Field(50, ge=1, le=1000)
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
    facts, episodes, next_cursor = [], [], None
    if chosen.current is not None and filters.show in ("both", "facts"):
        facts = call(
            request,
            caller,
            "list_facts",
            {
                "subjectKey": filters.subject,
                "kind": filters.kind,
                "limit": filters.limit,
                "asOf": utc(filters.as_of),
                "validAt": utc(filters.valid_at),
                "includeHistory": filters.history,
            },
            scope=chosen.fields(),
        ).facts
    if chosen.current is not None and filters.show in ("both", "episodes"):
        page = call(
            request,
            caller,
            "list_episodes",
            {
                "sessionId": filters.session,
                "after": utc(filters.after),
                "before": utc(filters.before),
                "limit": filters.limit,
                "cursor": filters.cursor,
            },
            scope=chosen.fields(),
        )
        episodes, next_cursor = page.episodes, page.next_cursor
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
    )


@router.get("/ui/part/recall")
@part
def recall_form(request: Request, caller: Authenticated, scope: str | None = None) -> HTMLResponse:
    return render(
        request,
        "recall.html",
        headers=replace_url(request, "recall"),
        caller=caller,
        scopes=scopes(request, caller, scope),
    )


@router.post("/ui/part/recall")
@part
def recall(
    request: Request,
    caller: Authenticated,
    query: Annotated[str, Form()],
    scope: Annotated[str, Form()] = "",
    limit: Annotated[int, Form()] = 8,
    history: Annotated[bool, Form()] = False,
    pending: Annotated[bool, Form()] = False,
) -> HTMLResponse:
    chosen = scopes(request, caller, scope or None)
    body = {"query": query, "limit": limit, "explain": True, "includeHistory": history, "includePending": pending}
    answer = call(request, caller, "recall", body=body, scope=chosen.fields())
    return render(
        request,
        "recalled.html",
        answer=answer,
        bars=charts.score_bars(answer.memories),
        scope_key=chosen.current.scope_key if chosen.current else "",
        width=charts.WIDTH,
    )
