"""Loading many new memories with their vectors at once: the benchmarks' loader, not a write path.

The rows are the ones the write path stores (the caller builds them with the same functions),
written already embedded, with one audit entry each, chained as ``Transaction.audit`` chains
them; ``engram bench bigscope`` checks on a sample that both paths leave the same rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from engramdb import clock
from engramdb.storage.columns import AUDIT_WIDTH
from engramdb.storage.common import loaded_audits, next_audit_entry, row_values
from engramdb.storage.port import AuditDraft, NewMemory, Vector
from engramdb.storage.scope_copy import encode
from engramdb.storage.sqlite.sql import AUDIT_COLUMNS
from engramdb.storage.sqlite.transaction import SQLiteTransaction

_INSERT = """INSERT INTO memories (source, memory_id, scope_key, agent_id, profile_id, privacy_scope,
    participant_scope_hash, sandbox_eligible, session_id, subject_key, kind, text, embed_text, trust_class,
    origin, status, confidence, observed_at, valid_from, valid_until, recorded_at, active_from, supersedes_id,
    status_reason, event_json, change_seq, embed_state, embed_model, embedding)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'ready',?,?)
    ON CONFLICT (scope_key, source, memory_id) DO NOTHING RETURNING memory_id"""


def load(
    conn: sqlite3.Connection, rows: Sequence[NewMemory], vectors: Vector, model: str, audits: Sequence[AuditDraft]
) -> int:
    """Insert new rows with their vectors ready, audited; return how many were new."""
    seq = SQLiteTransaction(conn)._change_seq()
    inserted = 0
    new: set[str] = set()
    for row, vector in zip(rows, vectors, strict=True):
        s = row.scope
        hit = conn.execute(
            _INSERT,
            (
                row.source,
                row.memory_id,
                s.scope_key,
                s.agent_id,
                s.profile_id,
                s.privacy_scope,
                s.participant_scope_hash,
                int(s.sandbox_eligible),
                row.session_id,
                row.subject_key,
                row.kind,
                row.text,
                row.embed_text,
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
                encode(vector),
            ),
        ).fetchone()
        if hit:
            inserted += 1
            new.add(row.memory_id)
    last = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
    entries = []
    for draft in loaded_audits(rows, audits, new):
        entry = next_audit_entry(draft, last, clock.now_text())
        entries.append(row_values(entry))
        last = (entry.seq, entry.hash)
    conn.executemany(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({','.join('?' * AUDIT_WIDTH)})", entries)
    return inserted
