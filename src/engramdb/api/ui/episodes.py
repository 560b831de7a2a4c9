"""An episode's page: the turn, its lifecycle and marks, what it is linked to, and what a person may
do to it (aging.py holds those actions)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import base, call, holding, part, render
from engramdb.core.auth import Caller
from engramdb.errors import EngramError
from engramdb.models.knowledge import RelationshipView

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
NAMED_LINKS = 50  # the records at the other end of this many links are looked up by name


def linked(
    request: Request, caller: Caller, node_id: str, kind: str, scope: dict[str, Any]
) -> tuple[list[RelationshipView], dict[str, str]]:
    """A node's relationships, and a name for each record at their other ends (its label and title)."""
    links = call(
        request, caller, "list_relationships", {"id": node_id, "kind": kind, "limit": 1000}, scope=scope
    ).relationships
    names: dict[str, str] = {}
    ends = {end.id for link in links for end in (link.source, link.target) if end.kind == "RECORD"}
    for record_id in sorted(ends - {node_id})[:NAMED_LINKS]:
        try:
            record = call(request, caller, "get_record", {"record_id": record_id}, scope=scope)
        except EngramError:  # gone since it was linked: shown by its id
            continue
        names[record_id] = f"{record.label} {title_of(record.properties) or record_id[:8]}"
    return list(links), names


def title_of(properties: dict[str, Any]) -> str:
    """What a record is called: its name, title or summary (or its first text property)."""
    for name in ("name", "title", "summary", "text", "description"):
        if isinstance(properties.get(name), str):
            return str(properties[name])
    return next((str(v) for v in properties.values() if isinstance(v, str)), "")


def episode_page(
    request: Request, caller: Caller, event_id: str, scope: str | None, done: str | None = None
) -> HTMLResponse:
    chosen = holding(request, caller, event_id, scope)
    memory = call(request, caller, "get_episode", {"event_id": event_id}, scope=chosen.fields())
    links, names = linked(request, caller, event_id, "EPISODE", chosen.fields())
    key = chosen.current.scope_key if chosen.current else ""
    return render(
        request,
        "episode.html",
        headers={"HX-Replace-Url": f"{base(request)}/episodes/{event_id}?scope={key}"},
        caller=caller,
        memory=memory,
        scope=chosen.current,
        scope_key=key,
        links=links,
        names=names,
        done=done,
    )


@router.get("/ui/part/episodes/{event_id}")
@part
def episode(request: Request, caller: Authenticated, event_id: str, scope: str | None = None) -> HTMLResponse:
    return episode_page(request, caller, event_id, scope)
