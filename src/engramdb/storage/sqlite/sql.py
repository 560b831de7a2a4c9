"""SQL fragments shared by the SQLite store and its transactions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.columns import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    episodes_clause,
    filter_clause,
    placeholders,
)
from engramdb.storage.port import AuditEntry, MemoryRecord, Tombstone

__all__ = [
    "AUDIT_COLUMNS",
    "MEMORY_COLUMNS",
    "TOMBSTONE_COLUMNS",
    "episodes_clause",
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


def memory(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(*row)


def tombstone(row: Sequence[Any]) -> Tombstone:
    return Tombstone(*row)


def audit_entry(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(*row)

