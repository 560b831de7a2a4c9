"""What the knowledge tools say to a model: records as a table (properties as JSON cells)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engramdb.api.mcp.text import ToolOutput, cell, plain, table
from engramdb.contract.canonical import canonical_json
from engramdb.contract.format import HEADING
from engramdb.models.knowledge import (
    Deleted,
    KnowledgeSchema,
    RecordSearchResult,
    RecordsWritten,
    RecordView,
    RelationshipView,
)


def _records(records: list[RecordView]) -> str:
    rows = [
        [r.id, r.label, plain(r.created_at[:19]), cell(canonical_json(r.properties), 1_000)]
        + ([f"{r.score:.3f}"] if r.score is not None else [])
        for r in records
    ]
    header = ["id", "label", "created", "properties"] + (["score"] if records and records[0].score is not None else [])
    return table(header, rows)


def saved(answer: RecordsWritten, _: dict[str, Any]) -> ToolOutput:
    ids = [r.id for r in answer.records]
    text = (
        f"Saved {len(ids)} record(s): {answer.created} created, {answer.updated} updated, {answer.unchanged} "
        f"unchanged, {answer.relationships} new link(s). Top-level ids: {', '.join(ids)}. They are marked "
        f"model-derived.\n\n{_records(answer.records)}"
    )
    return text, {"ids": ids, "created": answer.created, "updated": answer.updated}


def found(answer: RecordSearchResult, _: dict[str, Any]) -> ToolOutput:
    if not answer.records:
        return "No records match.", {"total": answer.total}
    shown = len(answer.records)
    how_many = f"{shown} of {answer.total}" if answer.total is not None else f"the first {shown} (more may match)"
    return (
        f"{HEADING}\n{how_many} matching record(s):\n\n{_records(answer.records)}",
        {"total": answer.total, "ids": [r.id for r in answer.records]},
    )


def deleted(answer: Deleted, _: dict[str, Any]) -> ToolOutput:
    what = f"{len(answer.records)} record(s) and {answer.relationships} relationship(s)"
    if answer.dry_run:
        return (
            f"Would delete {what}: {', '.join(answer.records) or 'none'}. Nothing was deleted; call again with "
            "confirm=true to delete them.",
            {"dryRun": True, "ids": answer.records},
        )
    return f"Deleted {what}.", {"dryRun": False, "ids": answer.records}


def linked(answer: RelationshipView, _: dict[str, Any]) -> ToolOutput:
    return (
        f"Linked {answer.source.kind} {answer.source.id} -{answer.type}-> {answer.target.kind} {answer.target.id}.",
        None,
    )


def schema(answer: KnowledgeSchema, _: dict[str, Any]) -> ToolOutput:
    if not answer.labels:
        return "No records in this memory scope yet.", None
    lines = []
    for label in answer.labels:
        props = ", ".join(f"{p.name} ({p.kind}, {p.records})" for p in label.properties) or "no properties"
        links = "; ".join(f"-{e.type}-> {e.target} ({e.count})" for e in label.relationships)
        lines.append(f"- {label.label}: {label.records} record(s); {props}" + (f"; links {links}" if links else ""))
    return "Labels of this memory scope:\n" + "\n".join(lines), None


RENDERERS: dict[str, Callable[[Any, dict[str, Any]], ToolOutput]] = {
    "save_record": saved,
    "find_records": found,
    "delete_records": deleted,
    "link_records": linked,
    "knowledge_schema": schema,
}
