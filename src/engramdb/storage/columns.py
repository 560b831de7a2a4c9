"""Column lists shared by both backends: the order matches the port's record dataclasses."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np

from engramdb.lexical.body import lexical_text
from engramdb.storage.assist.port import LINK_COLUMNS
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.rows import AuditFilter, CandidateFilter, ListPosition, MemoryRecord, NewMemory

MEMORY_COLUMNS = (
    "rowid, source, memory_id, scope_key, text, trust_class, origin, status, confidence, "
    "observed_at, recorded_at, event_json, embed_state, embed_error, embed_attempts, session_id, "
    "subject_key, kind, valid_from, valid_until, retired_at, supersedes_id, superseded_by_id, "
    "status_reason, active_from, invalid_at, embed_model, pinned, importance"
)
_MEMORY_FIELDS = tuple(f.name for f in fields(MemoryRecord))


def memory_record(row: Sequence[Any]) -> MemoryRecord:
    """``MemoryRecord(*row)`` for a row of ``MEMORY_COLUMNS``, built without the frozen dataclass's
    ``__init__``, which sets its 29 fields one ``object.__setattr__`` at a time: 4.6 us a record
    against 1.6 (a recall builds 20-40, a page of a listing or an export thousands). The same record:
    equal, hashed, shown and frozen alike (tests/storage/test_memory_record.py), at ~60 bytes more (an
    instance dict where ``__init__`` keeps attributes inline). A row of another width goes through
    ``__init__``, which refuses one of too many values."""
    if len(row) != len(_MEMORY_FIELDS):
        return MemoryRecord(*row)
    record = object.__new__(MemoryRecord)
    record.__dict__.update(zip(_MEMORY_FIELDS, row, strict=True))
    return record


AUDIT_COLUMNS = (
    "seq, at, action, actor_key_id, actor_role, target_kind, target_id, scope_key, "
    "before_digest, after_digest, reason, prev_hash, hash, reason_digest, reason_nonce"
)
AUDIT_WIDTH = AUDIT_COLUMNS.count(",") + 1  # placeholders an audit row takes (tenant not counted)
TOMBSTONE_COLUMNS = (
    "tombstone_id, scope_key, subject_key, kind, value_hash, fact_id, reason, created_at, "
    "actor_key_id, lifted_at, lifted_by, lift_reason"
)


def audit_clause(filt: AuditFilter | None, mark: str = "?") -> tuple[str, list[Any]]:
    """The WHERE conjuncts (leading " AND ...") and parameters of an audit filter."""
    if filt is None:
        return "", []
    sql, params = "", []
    if filt.action_prefix is not None:
        sql += f" AND substr(action, 1, {len(filt.action_prefix)}) = {mark}"
        params.append(filt.action_prefix)
    named, values = equalities({"target_id": filt.target_id, "actor_key_id": filt.actor_key_id}, mark)
    return sql + named, params + values


def lexical_body(row: NewMemory) -> str:
    """What the lexical arm indexes (lexical/body.py) of a row about to be written."""
    return lexical_text(row.text, row.subject_key, row.kind)


# Export/import: the columns each table carries between backends (ids and counters are local).
EXPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "memories": (
        "source",
        "memory_id",
        "scope_key",
        "agent_id",
        "profile_id",
        "privacy_scope",
        "participant_scope_hash",
        "sandbox_eligible",
        "session_id",
        "subject_key",
        "kind",
        "text",
        "embed_text",
        "trust_class",
        "origin",
        "status",
        "confidence",
        "observed_at",
        "valid_from",
        "valid_until",
        "recorded_at",
        "active_from",
        "retired_at",
        "supersedes_id",
        "superseded_by_id",
        "status_reason",
        "invalid_at",
        "event_json",
        "embed_state",
        "embed_error",
        "embed_attempts",
        "embed_next_at",
        "embed_model",
        "embedding",
        "source_event_id",
        "importance",
        "pinned",
        "use_count",
        "last_used_at",
    ),
    "tombstones": tuple(c.strip() for c in TOMBSTONE_COLUMNS.split(",")),
    "api_keys": ("key_id", "role", "grant_json", "secret_hash", "label", "created_at", "revoked_at"),
    "audit_log": tuple(c.strip() for c in AUDIT_COLUMNS.split(",")),
    "model_links": tuple(c.strip() for c in LINK_COLUMNS.split(",")),
}
# The exported tables that belong to the tenant, not to a scope: a scope's export leaves them out.
TENANT_WIDE = frozenset({"meta", "api_keys", "audit_log"})
EXPORT_ORDER = {
    "memories": "rowid",
    "tombstones": "created_at, tombstone_id",
    "api_keys": "created_at",
    "audit_log": "seq",
    "model_links": "created_at, link_id",
}


def export_statement(
    d: Dialect, table: str, columns: Sequence[str], scope_keys: Sequence[str] | None
) -> tuple[str, list[Any]]:
    """The read of one exported table of the tenant (or of ``scope_keys`` only), in export order."""
    source, where, params = d.scoped(table, "t", scope_keys)
    order = ", ".join(f"t.{c.strip()}" for c in EXPORT_ORDER[table].split(","))
    return f"SELECT {', '.join(f't.{c}' for c in columns)} FROM {source} WHERE {where} ORDER BY {order}", params


def facts_clause(
    filt: CandidateFilter,
    *,
    subject_key: str | None,
    kind: str | None,
    below: ListPosition | None,
    mark: str = "?",
) -> tuple[str, list[Any]]:
    """The filters and newest-first order of a fact listing, after ``WHERE`` on the scope (its
    source spelt out: SQLite reads its partial index by recorded time only when the query says so)."""
    sql, params = filter_clause(filt, mark=mark)
    named, values = equalities({"m.subject_key": subject_key, "m.kind": kind}, mark)
    sql += f" AND m.source = 'MEMORY_FACT'{named}"
    params += values
    if below is not None:
        sql += f" AND (m.recorded_at, m.rowid) < ({mark}, {mark})"
        params += [below.at, below.rowid]
    return sql + f" ORDER BY m.recorded_at DESC, m.rowid DESC LIMIT {mark}", params


def episodes_clause(
    *,
    session_id: str | None,
    after: str | None,
    before: str | None,
    below: ListPosition | None,
    mark: str = "?",
) -> tuple[str, list[Any]]:
    """The filters and newest-first order of an episode listing, after ``WHERE`` on the scope."""
    sql, params = episodes_filter(session_id=session_id, after=after, before=before, mark=mark)
    if below is not None:
        sql += f" AND (m.observed_at, m.rowid) < ({mark}, {mark})"
        params += [below.at, below.rowid]
    return sql + f" ORDER BY m.observed_at DESC, m.rowid DESC LIMIT {mark}", params


def episodes_filter(
    *, session_id: str | None, after: str | None, before: str | None, mark: str = "?"
) -> tuple[str, list[Any]]:
    """The conjuncts that pick a scope's listed episodes (active ones, the filters), after ``WHERE``."""
    sql = " AND m.source = 'EPISODE' AND m.status = 'active'"
    params: list[Any] = []
    for clause, value in (("m.session_id = ", session_id), ("m.observed_at >= ", after), ("m.observed_at < ", before)):
        if value is not None:
            sql += f" AND {clause}{mark}"
            params.append(value)
    return sql, params


def equalities(columns: dict[str, Any], mark: str = "?") -> tuple[str, list[Any]]:
    """`` AND <column> = ?`` for each column given a value (None: not asked), and those values."""
    given = {column: value for column, value in columns.items() if value is not None}
    return "".join(f" AND {column} = {mark}" for column in given), list(given.values())


def placeholders(values: Sequence[Any], mark: str = "?") -> str:
    """Return ``mark`` once per value, comma-separated (``?`` for SQLite, ``%s`` for psycopg)."""
    return ",".join([mark] * len(values))


def filter_clause(filt: CandidateFilter, alias: str = "m", mark: str = "?") -> tuple[str, list[Any]]:
    """Return the WHERE conjuncts (leading " AND ...") and parameters of a candidate filter."""
    sql, params = "", []
    if filt.statuses is not None:
        sql += f" AND {alias}.status IN ({placeholders(filt.statuses, mark)})"
        params += list(filt.statuses)
    sql += f" AND {alias}.source IN ({placeholders(filt.sources, mark)})"
    params += list(filt.sources)
    if filt.exclude_session_id is not None:
        sql += f" AND ({alias}.session_id IS NULL OR {alias}.session_id != {mark})"
        params.append(filt.exclude_session_id)
    if filt.as_of is not None:
        sql += f" AND {alias}.active_from <= {mark} AND ({alias}.retired_at IS NULL OR {alias}.retired_at > {mark})"
        params += [filt.as_of, filt.as_of]
    if filt.believed_by is not None:  # a fact stored as history was never current: known once retired
        sql += f" AND coalesce({alias}.active_from, {alias}.retired_at) <= {mark}"
        params.append(filt.believed_by)
    if filt.valid_at is not None:
        sql += (
            f" AND ({alias}.valid_from IS NULL OR {alias}.valid_from <= {mark})"
            f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > {mark})"
        )
        params += [filt.valid_at, filt.valid_at]
        if filt.as_of is None:  # (as of a time, no row seen was superseded yet: nothing to close)
            sql += f" AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > {mark}"
            params.append(filt.valid_at)
            if filt.believed_by is not None:  # history as it stood then: later successors unknown
                sql += f" OR {alias}.retired_at > {mark}"
                params.append(filt.believed_by)
            sql += ")"
    if filt.expires_after is not None:
        sql += f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > {mark})"
        params.append(filt.expires_after)
    return sql, params


def embedding_to_text(value: Any) -> str | None:
    """Return a stored vector as base64 of little-endian float32 (the export encoding)."""
    if value is None:
        return None
    if hasattr(value, "to_numpy"):  # pgvector's Vector
        value = value.to_numpy()
    raw = value if isinstance(value, bytes) else np.asarray(value, dtype="<f4").tobytes()
    return base64.b64encode(raw).decode()


def embedding_from_text(text: str | None) -> np.ndarray | None:
    """Return the vector an exported embedding holds."""
    return None if text is None else np.frombuffer(base64.b64decode(text), dtype="<f4")
