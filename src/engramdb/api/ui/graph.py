"""The graph of a scope: its records (entities, tasks, decisions, sessions, ...) and the memories
linked to them. The server places the nodes (graph_layout.py) and sends them as one JSON block;
static/graph.js draws them on a canvas, pans, zooms and opens a node on click, and fills the table
that lists the same nodes for keyboards and screen readers when it is opened.

The records and their relationships are read with one export (a statement for the records, one per
chunk of 500 nodes for the relationships and their ends), however many nodes the scope holds.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import Scopes, call, part, render, replace_url, scopes
from engramdb.api.ui.episodes import title_of
from engramdb.api.ui.graph_layout import Drawing, Edge, Node, layout
from engramdb.core.auth import Caller
from engramdb.models.knowledge import GraphExport

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
MAX_RECORDS = 1_000  # the most records export_records matches
KNOWN_LABELS = ("SESSION", "DECISION", "TASK", "ENTITY", "ARTIFACT", "PREFERENCE", "EPISODE", "FACT")
KINDS = ("RECORD", "EPISODE", "MEMORY_FACT")  # a node's page: records/, episodes/, facts/
NAME_MAX = 80  # a node's name as the table shows it (the drawing, its first 28 characters)


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


def nodes_and_edges(exported: GraphExport, names: dict[str, str]) -> tuple[list[Node], list[Edge]]:
    """The graph's nodes (records, then the memories their relationships reach) and its edges."""
    nodes = {r.id: Node(r.id, "RECORD", r.label, title_of(r.properties) or r.id[:8]) for r in exported.records}
    for rel in exported.relationships:
        for end in (rel.source, rel.target):
            if end.id not in nodes and end.kind != "RECORD":
                label = "EPISODE" if end.kind == "EPISODE" else "FACT"
                name = names.get(end.id) or f"{label.lower()} {end.id[:8]}…"
                nodes[end.id] = Node(end.id, end.kind, label, name)
    edges = [Edge(rel.source.id, rel.target.id, rel.type) for rel in exported.relationships]
    return list(nodes.values()), edges


def payload(drawing: Drawing, focus: str) -> dict[str, Any]:
    """What graph.js draws: the box, each node as ``[x, y, degree, label, kind, id, name]`` (labels and
    kinds by their index in ``labels`` and ``KINDS``) and each edge as the indexes of its two nodes."""
    index = {p.node.id: i for i, p in enumerate(drawing.nodes)}
    labels = [*KNOWN_LABELS, "other"]
    nodes = [
        [
            p.x,
            p.y,
            p.degree,
            labels.index(p.node.label) if p.node.label in KNOWN_LABELS else len(KNOWN_LABELS),
            KINDS.index(p.node.kind) if p.node.kind in KINDS else 2,
            p.node.id,
            p.node.name[:NAME_MAX],
        ]
        for p in drawing.nodes
    ]
    edges = [[index[a.node.id], index[b.node.id]] for a, b, _ in drawing.edges]
    return {"box": drawing.box, "labels": labels, "nodes": nodes, "edges": edges, "focus": focus}


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
        # One hop out either way: it brings the relationships between the records too; hidden memories
        # are then left out with the relationships that reach them.
        body = {"labels": labels.replace(",", " ").split(), "depth": 1, "limit": MAX_RECORDS}
        exported = call(request, caller, "export_records", body=body, scope=chosen.fields())
        if not memories:
            exported.relationships = [r for r in exported.relationships if r.source.kind == r.target.kind == "RECORD"]
        ends = {e.id for r in exported.relationships for e in (r.source, r.target) if e.kind != "RECORD"}
        nodes, edges = nodes_and_edges(exported, _memory_names(request, caller, chosen, ends))
        drawing = layout(nodes, edges)
        counts = {"records": len(exported.records), "memories": len(nodes) - len(exported.records)}
    return render(
        request,
        "graph.html",
        headers=replace_url(request, "graph"),
        scopes=chosen,
        drawing=drawing,
        data=payload(drawing, focus) if drawing else None,
        counts=counts,
        labels=labels,
        memories=memories,
        focus=focus,
        known=KNOWN_LABELS,
    )
