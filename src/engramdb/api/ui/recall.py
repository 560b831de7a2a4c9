"""The recall playground: a query as an agent would ask it, each memory's relevance and score
breakdown, and the context block the agent gets."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated, in_recall_lane
from engramdb.api.ui import charts
from engramdb.api.ui.common import call, part, render, replace_url, scopes
from engramdb.core.auth import Caller

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
FLOOR = 0.3  # the playground's relevance floor until the operator changes it (the API has none by default)


@router.get("/ui/part/recall")
@part
def recall_form(request: Request, caller: Authenticated, scope: str | None = None) -> HTMLResponse:
    return render(
        request,
        "recall.html",
        headers=replace_url(request, "recall"),
        caller=caller,
        scopes=scopes(request, caller, scope),
        floor=FLOOR,
    )


@router.post("/ui/part/recall")
@in_recall_lane  # the playground's recalls take their turn with the agents'
@part
def recall(
    request: Request,
    caller: Authenticated,
    query: Annotated[str, Form()],
    scope: Annotated[str, Form()] = "",
    limit: Annotated[int, Form()] = 8,
    min_score: Annotated[str, Form(alias="minScore")] = "",
    history: Annotated[bool, Form()] = False,
    pending: Annotated[bool, Form()] = False,
) -> HTMLResponse:
    chosen = scopes(request, caller, scope or None)
    body = {"query": query, "limit": limit, "explain": True, "includeHistory": history, "includePending": pending}
    floor = _floor(min_score)
    if floor is not None:
        body["minScore"] = floor
    answer = call(request, caller, "recall", body=body, scope=chosen.fields())
    return render(
        request,
        "recalled.html",
        answer=answer,
        bars=charts.score_bars(answer.memories),
        scope_key=chosen.current.scope_key if chosen.current else "",
        width=charts.WIDTH,
        floor=floor,
    )


def _floor(text: str) -> float | str | None:
    """The relevance floor as typed: a number (the operation checks its range), else the text itself
    (refused by the operation, naming the field)."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return text
