"""The graph of a scope: its records (entities, tasks, decisions, sessions, ...) and the memories
linked to them, drawn by the server as SVG (graph_layout.py places the nodes); static/graph.js
pans, zooms and opens a node on click. A table lists the same nodes for keyboards and screen readers.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import Scopes, base, call, part, render, replace_url, scopes
from engramdb.api.ui.episodes import title_of
from engramdb.api.ui.graph_layout import Edge, Node, layout
from engramdb.core.auth import Caller
from engramdb.models.knowledge import GraphExport

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
MAX_RECORDS = 10_000  # export_records answers at most this many
KNOWN_LABELS = ("SESSION", "DECISION", "TASK", "ENTITY", "ARTIFACT", "PREFERENCE", "EPISODE", "FACT")


def _memory_names(request: Request, caller: Caller, chosen: Scopes, wanted: set[str]) -> dict[str, str]:
    """The texts of the memories the graph shows (a fact's text, an episode's summary), as far as the
    scope's lists reach (1,000 of each)."""
    if not wanted:
        return {}
    facts = call(request, caller, "list_facts", {"limit": 1000, "includeHistory": True}, scope=chosen.fields()).facts
    episodes = call(request, caller, "list_episodes", {"limit": 1000}, scope=chosen.fields()).episodes
    names = {f.id: str(f.event.get("text", "")) for f in facts if f.id in wanted}
    names.update({e.id: str(e.event.get("summary", "")) for e in episodes if e.id in wanted})
    return names


def nodes_and_edges(exported: GraphExport, names: dict[str, str], link: Any) -> tuple[list[Node], list[Edge]]:
    """The graph's nodes (records, then the memories their relationships reach) and its edges."""
    nodes = {
        r.id: Node(r.id, "RECORD", r.label, title_of(r.properties) or r.id[:8], link("RECORD", r.id))
        for r in exported.records
    }
    for rel in exported.relationships:
        for end in (rel.source, rel.target):
            if end.id not in nodes and end.kind != "RECORD":
                label = "EPISODE" if end.kind == "EPISODE" else "FACT"
                name = names.get(end.id) or f"{label.lower()} {end.id[:8]}…"
                nodes[end.id] = Node(end.id, end.kind, label, name, link(end.kind, end.id))
    edges = [Edge(rel.source.id, rel.target.id, rel.type) for rel in exported.relationships]
    return list(nodes.values()), edges


@router.get("/ui/part/graph")
@part
def graph(
    request: Request,
    caller: Authenticated,
    scope: str | None = None,
    labels: str = "",
    memories: Annotated[bool, Query()] = True,
    focus: str = "",
) -> HTMLResponse:
    chosen = scopes(request, caller, scope)
    drawing, counts = None, {"records": 0, "memories": 0}
    if chosen.current is not None:
        key = chosen.current.scope_key
        body = {"labels": labels.replace(",", " ").split(), "depth": 1 if memories else 0, "limit": MAX_RECORDS}
        exported = call(request, caller, "export_records", body=body, scope=chosen.fields())
        if not memories:
            exported.relationships = [r for r in exported.relationships if r.source.kind == r.target.kind == "RECORD"]
        ends = {e.id for r in exported.relationships for e in (r.source, r.target) if e.kind != "RECORD"}

        def link(kind: str, node_id: str) -> str:
            page = {"RECORD": "records", "EPISODE": "episodes"}.get(kind, "facts")
            return f"{base(request)}/{page}/{node_id}?scope={key}"

        nodes, edges = nodes_and_edges(exported, _memory_names(request, caller, chosen, ends), link)
        drawing = layout(nodes, edges)
        counts = {"records": len(exported.records), "memories": len(nodes) - len(exported.records)}
    return render(
        request,
        "graph.html",
        headers=replace_url(request, "graph"),
        scopes=chosen,
        drawing=drawing,
        counts=counts,
        labels=labels,
        memories=memories,
        focus=focus,
        known=KNOWN_LABELS,
    )
