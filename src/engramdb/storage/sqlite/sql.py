"""SQL fragments shared by the SQLite store and its transactions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.lexical.body import lexical_text
from engramdb.storage.columns import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    episodes_clause,
    episodes_filter,
    facts_clause,
    filter_clause,
    memory_record,
    placeholders,
)
from engramdb.storage.port import AuditEntry, MemoryRecord, Tombstone
from engramdb.storage.scope_copy import CopyRow

__all__ = [
    "AUDIT_COLUMNS",
    "MEMORY_COLUMNS",
    "TOMBSTONE_COLUMNS",
    "episodes_clause",
    "episodes_filter",
    "facts_clause",
    "filter_clause",
    "placeholders",
]

# Files and exports made before ``invalid_at`` existed: each superseded fact stops holding where
# its successor starts.
CLOSE_SUPERSEDED_SQL = (
    "UPDATE memories SET invalid_at = (SELECT s.valid_from FROM memories s "
    "WHERE s.scope_key = memories.scope_key AND s.source = 'MEMORY_FACT' "
    "AND s.memory_id = memories.superseded_by_id) "
    "WHERE source = 'MEMORY_FACT' AND superseded_by_id IS NOT NULL AND invalid_at IS NULL"
)

# Files and exports made before facts were linked to their episodes: the column from the event,
# then every DERIVED_FROM link it implies (``GraphWrites.link_derivation`` makes them from now on).
FILL_SOURCE_EVENTS_SQL = (
    "UPDATE memories SET source_event_id = json_extract(event_json, '$.sourceEventId') WHERE source_event_id IS NULL"
)
LINK_DERIVATIONS_SQL = (
    "INSERT INTO relationships (scope_key, type, source_kind, source, target_kind, target, properties_json, "
    "created_at) SELECT f.scope_key, 'DERIVED_FROM', 'MEMORY_FACT', f.rowid, 'EPISODE', e.rowid, '{}', "
    "f.recorded_at FROM memories f JOIN memories e ON e.scope_key = f.scope_key AND e.source = 'EPISODE' "
    "AND (e.memory_id = f.source_event_id OR e.source_event_id = f.source_event_id) "
    "WHERE f.source = 'MEMORY_FACT' AND f.source_event_id IS NOT NULL ON CONFLICT DO NOTHING"
)
SOURCE_EVENTS_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_by_source_event ON memories (scope_key, source, source_event_id) "
    "WHERE source_event_id IS NOT NULL"
)


def memory(row: Sequence[Any]) -> MemoryRecord:
    return memory_record(row)


def tombstone(row: Sequence[Any]) -> Tombstone:
    return Tombstone(*row)


def audit_entry(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(*row)


# A scope copy's rows (storage/scope_copy.py); the two parameters name the model whose vectors it
# holds (None: any), so another embedder's vectors never enter it.
COPY_ROW_SQL = (
    "SELECT rowid, source, status, session_id, "
    "CASE WHEN embed_state = 'ready' AND (? IS NULL OR embed_model = ?) THEN embedding END, "
    "active_from, retired_at, valid_from, valid_until, invalid_at, text, subject_key, kind FROM memories"
)


def copy_rows(records: Sequence[Sequence[Any]]) -> list[CopyRow]:
    """Return cache rows from the columns of ``COPY_ROW_SQL``, in order."""
    return [
        CopyRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], body=lexical_text(r[10], r[11], r[12]))
        for r in records
    ]
