"""The knowledge plane in ``engram export`` / ``engram import``: rows named by ids, not rowids.

Row ids are local to a store, so an exported row names records by ``record_id`` and memories by
their ``memory_id`` (each within its scope); an import resolves them in the target. Records come
before what refers to them, so one pass in export order imports everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from engramdb.errors import ConflictError
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.knowledge.sql import Dialect

RECORD_FIELDS = (
    "record_id",
    "scope_key",
    "agent_id",
    "profile_id",
    "privacy_scope",
    "participant_scope_hash",
    "sandbox_eligible",
    "label",
    "properties_json",
    "merge_key",
    "merge_identity",
    "origin",
    "version",
    "created_at",
    "updated_at",
)
VALUE_FIELDS = ("label", "name", "kind", "text_key", "text_value", "text_fold", "number_value")
HISTORY_FIELDS = ("version", "properties_json", "replaced_at")
VECTOR_FIELDS = (
    "name",
    "text",
    "embed_state",
    "embed_error",
    "embed_attempts",
    "embed_next_at",
    "embed_model",
    "embedding",
)
OWNED = {"record_values": VALUE_FIELDS, "record_history": HISTORY_FIELDS, "record_vectors": VECTOR_FIELDS}
TABLES = ("records", "record_values", "record_history", "record_vectors", "relationships")
# A record's rows of each table in one order whatever the plan (a plan by label sorted them otherwise).
_WITHIN_RECORD = {
    "record_values": "t.name, t.kind, t.text_key, t.text_value, t.number_value",
    "record_history": "t.version",
    "record_vectors": "t.name",
}
_NODE = (
    "CASE {side}_kind WHEN 'RECORD' THEN (SELECT record_id FROM records n WHERE n.rowid = e.{side}) "
    "ELSE (SELECT memory_id FROM memories n WHERE n.rowid = e.{side}) END"
)


def export_rows(
    run: Run, d: Dialect, encode: Callable[[Any], str | None], scope_keys: Sequence[str] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every record, value, earlier version, text vector and relationship of the tenant, or of
    ``scope_keys`` only."""
    records, where, params = d.scoped("records", "r", scope_keys)
    selected = ", ".join(f"r.{f}" for f in RECORD_FIELDS)
    for row in run(f"SELECT {selected} FROM {records} WHERE {where} ORDER BY r.rowid", params):
        yield "records", {**dict(zip(RECORD_FIELDS, row, strict=True)), "sandbox_eligible": bool(row[6])}
    for table, fields in OWNED.items():
        columns = ", ".join(f"t.{f}" for f in fields)
        for row in run(
            f"SELECT r.record_id, r.scope_key, {columns} FROM {records} {d.in_order} {table} t "
            f"ON r.rowid = t.record WHERE {where} ORDER BY r.rowid, {_WITHIN_RECORD[table]}",
            params,
        ):
            out = {"record_id": row[0], "scope_key": row[1], **dict(zip(fields, row[2:], strict=True))}
            if table == "record_vectors":
                out["embedding"] = encode(out["embedding"])
            yield table, out
    links, where, params = d.scoped("relationships", "e", scope_keys)
    sides = ", ".join(_NODE.format(side=side) for side in ("source", "target"))
    for row in run(
        f"SELECT e.scope_key, e.type, e.source_kind, e.target_kind, e.properties_json, e.created_at, "
        f"{sides} FROM {links} WHERE {where} ORDER BY e.rowid",
        params,
    ):
        yield (
            "relationships",
            dict(
                zip(
                    (
                        "scope_key",
                        "type",
                        "source_kind",
                        "target_kind",
                        "properties_json",
                        "created_at",
                        "source_id",
                        "target_id",
                    ),
                    row,
                    strict=True,
                )
            ),
        )


class Importer:
    """Imports the knowledge plane's rows, in export order, into a tenant that holds none."""

    def __init__(self, run: Run, d: Dialect, decode: Callable[[str | None], Any]) -> None:
        self._run = run
        self._d = d
        self._decode = decode
        self._records: dict[tuple[str, str], int] = {}  # (scope, record id) -> rowid here
        self._labels: dict[int, str] = {}  # rowid -> the record's label, which its values carry

    def add(self, table: str, row: dict[str, Any]) -> None:
        tenant = ["tenant"] if self._d.tenant is not None else []
        lead = [self._d.tenant] if self._d.tenant is not None else []
        if table == "records":
            values = [row.get(f) if f == "merge_identity" else row[f] for f in RECORD_FIELDS]  # older files lack it
            rowid = self._insert("records", [*tenant, *RECORD_FIELDS], [*lead, *values], returning=True)
            self._records[(row["scope_key"], row["record_id"])] = rowid
            self._labels[rowid] = row["label"]
            return
        if table == "relationships":
            source = self._node(row, "source")
            target = self._node(row, "target")
            fields = [
                "scope_key",
                "type",
                "source_kind",
                "source",
                "target_kind",
                "target",
                "properties_json",
                "created_at",
            ]
            values = [
                row["scope_key"],
                row["type"],
                row["source_kind"],
                source,
                row["target_kind"],
                target,
                row["properties_json"],
                row["created_at"],
            ]
            self._insert(table, [*tenant, *fields], [*lead, *values])
            return
        owned = OWNED[table]
        record = self._record(row["scope_key"], row["record_id"])
        values = [self._decode(row.get(f)) if f == "embedding" else row.get(f) for f in owned]
        if table == "record_values":  # its record's label, whatever the file says: a scope's schema counts by it
            values[owned.index("label")] = self._labels[record]
        scoped = ["scope_key"] if table != "record_history" else []
        scope = [row["scope_key"]] if table != "record_history" else []
        self._insert(table, [*tenant, "record", *scoped, *owned], [*lead, record, *scope, *values])

    def _node(self, row: dict[str, Any], side: str) -> int:
        kind, node_id, scope = row[f"{side}_kind"], row[f"{side}_id"], row["scope_key"]
        if kind == "RECORD":
            return self._record(scope, node_id)
        owned, params = self._d.owned("m")
        m = self._d.mark
        found = self._run(
            f"SELECT m.rowid FROM memories m WHERE {owned}m.scope_key = {m} AND m.source = {m} AND m.memory_id = {m}",
            [*params, scope, kind, node_id],
        )
        if not found:
            raise ConflictError(f"the import links to {kind} {node_id}, which it does not hold", field="relationships")
        return int(found[0][0])

    def _record(self, scope: str, record_id: str) -> int:
        rowid = self._records.get((scope, record_id))
        if rowid is None:
            raise ConflictError(f"the import refers to record {record_id} before it holds it", field="records")
        return rowid

    def _insert(self, table: str, fields: list[str], values: list[Any], *, returning: bool = False) -> int:
        rows = self._run(
            f"INSERT INTO {table} ({', '.join(fields)}) VALUES ({self._d.marks(len(values))})"
            + (" RETURNING rowid" if returning else ""),
            values,
        )
        return int(rows[0][0]) if returning else 0
