"""SQL fragments shared by the SQLite store and its transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from engramdb.storage.port import AuditEntry, CandidateFilter, MemoryRecord, Tombstone
from engramdb.storage.sqlite.connection import translate

MEMORY_COLUMNS = (
    "rowid, source, memory_id, scope_key, text, trust_class, origin, status, confidence, "
    "observed_at, recorded_at, event_json, embed_state, embed_error, embed_attempts, session_id, "
    "subject_key, kind, valid_from, valid_until, retired_at, supersedes_id, superseded_by_id, "
    "status_reason, active_from"
)
AUDIT_COLUMNS = (
    "seq, at, action, actor_key_id, actor_role, target_kind, target_id, scope_key, "
    "before_digest, after_digest, reason, prev_hash, hash"
)
TOMBSTONE_COLUMNS = (
    "tombstone_id, scope_key, subject_key, kind, value_hash, fact_id, reason, created_at, "
    "actor_key_id, lifted_at, lifted_by, lift_reason"
)


def placeholders(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def filter_clause(filt: CandidateFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """Return the WHERE conjuncts (leading " AND ...") and parameters of a candidate filter."""
    sql, params = "", []
    if filt.statuses is not None:
        sql += f" AND {alias}.status IN ({placeholders(filt.statuses)})"
        params += list(filt.statuses)
    sql += f" AND {alias}.source IN ({placeholders(filt.sources)})"
    params += list(filt.sources)
    if filt.exclude_session_id is not None:
        sql += f" AND ({alias}.session_id IS NULL OR {alias}.session_id != ?)"
        params.append(filt.exclude_session_id)
    if filt.as_of is not None:
        sql += (
            f" AND {alias}.active_from <= ?"
            f" AND ({alias}.retired_at IS NULL OR {alias}.retired_at > ?)"
        )
        params += [filt.as_of, filt.as_of]
    if filt.believed_by is not None:
        sql += f" AND {alias}.active_from <= ?"
        params.append(filt.believed_by)
    if filt.valid_at is not None:
        sql += (
            f" AND ({alias}.valid_from IS NULL OR {alias}.valid_from <= ?)"
            f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > ?)"
        )
        params += [filt.valid_at, filt.valid_at]
    if filt.expires_after is not None:
        sql += f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > ?)"
        params.append(filt.expires_after)
    return sql, params


def memory(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(*row)


def tombstone(row: Sequence[Any]) -> Tombstone:
    return Tombstone(*row)


def audit_entry(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(*row)


def fetchone(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> Any:
    try:
        return conn.execute(sql, params).fetchone()
    except sqlite3.Error as error:
        raise translate(error) from error


def fetchall(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as error:
        raise translate(error) from error
