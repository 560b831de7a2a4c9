"""Loading many new memories with their vectors at once: the benchmarks' loader, not a write path.

The rows are the ones the write path stores (the caller builds them with the same functions),
written already embedded, with one audit entry each, chained as ``Transaction.audit`` chains
them; ``engram bench bigscope`` checks on a sample that both paths leave the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from engramdb import clock
from engramdb.storage.columns import AUDIT_COLUMNS, AUDIT_WIDTH, lexical_body
from engramdb.storage.common import loaded_audits, next_audit_entry, row_values
from engramdb.storage.port import AuditDraft, NewMemory, Vector

_INSERT = """INSERT INTO memories (tenant, source, memory_id, scope_key, agent_id, profile_id, privacy_scope,
    participant_scope_hash, sandbox_eligible, session_id, subject_key, kind, text, embed_text, lexical_body,
    trust_class, origin, status, confidence, observed_at, valid_from, valid_until, recorded_at, active_from,
    supersedes_id, status_reason, event_json, change_seq, embed_state, embed_model, embedding)
    VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,'ready',%s,%s)
    ON CONFLICT (tenant, scope_key, source, memory_id) DO NOTHING RETURNING memory_id"""


def load(
    conn: psycopg.Connection,
    tenant: str,
    seq: int,
    rows: Sequence[NewMemory],
    vectors: Vector,
    model: str,
    audits: Sequence[AuditDraft],
) -> int:
    """Insert new rows with their vectors ready, audited; return how many were new."""
    params = [_values(tenant, seq, model, row, vector) for row, vector in zip(rows, vectors, strict=True)]
    new: set[str] = set()
    with conn.cursor() as cursor:
        cursor.executemany(_INSERT, params, returning=True)
        while True:
            new.update(r[0] for r in cursor.fetchall())
            if not cursor.nextset():
                break
    _audit_new(conn, tenant, loaded_audits(rows, audits, new))
    return len(new)


def _values(tenant: str, seq: int, model: str, row: NewMemory, vector: Vector) -> tuple[Any, ...]:
    """One row's values in ``_INSERT``'s column order, its vector ready."""
    s = row.scope
    return (
        tenant,
        row.source,
        row.memory_id,
        s.scope_key,
        s.agent_id,
        s.profile_id,
        s.privacy_scope,
        s.participant_scope_hash,
        s.sandbox_eligible,
        row.session_id,
        row.subject_key,
        row.kind,
        row.text,
        row.embed_text,
        lexical_body(row),
        row.trust_class,
        row.origin,
        row.status,
        row.confidence,
        row.observed_at,
        row.valid_from,
        row.valid_until,
        row.recorded_at,
        row.active_from,
        row.supersedes_id,
        row.status_reason,
        row.event_json,
        seq,
        model,
        np.asarray(vector, dtype=np.float32),
    )


def _audit_new(conn: psycopg.Connection, tenant: str, audits: Sequence[AuditDraft]) -> None:
    """Chain the audit entries of the rows that were new (a re-load of a row audits nothing)."""
    last = conn.execute(
        "SELECT seq, hash FROM audit_log WHERE tenant = %s ORDER BY seq DESC LIMIT 1", (tenant,)
    ).fetchone()
    entries = []
    for draft in audits:
        entry = next_audit_entry(draft, last, clock.now_text())
        entries.append((tenant, *row_values(entry)))
        last = (entry.seq, entry.hash)
    with conn.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO audit_log (tenant, {AUDIT_COLUMNS}) VALUES ({','.join(['%s'] * (AUDIT_WIDTH + 1))})", entries
        )
