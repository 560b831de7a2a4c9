"""A write transaction on one tenant file (``BEGIN IMMEDIATE``: one writer at a time)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from engramdb import clock
from engramdb.storage.aging import AgingWrites
from engramdb.storage.assist.sql import AssistTransactionSQL
from engramdb.storage.columns import AUDIT_WIDTH
from engramdb.storage.common import acting_keys, next_audit_entry, refuse_revoked, row_values
from engramdb.storage.feed.webhooks import WebhookWritesSQL
from engramdb.storage.history_walk import history_rows
from engramdb.storage.knowledge.rows import Run, RunMany
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.port import (
    AuditDraft,
    AuditEntry,
    MemoryRecord,
    NewMemory,
    Source,
    Tombstone,
)
from engramdb.storage.scope_cache import erasure_key
from engramdb.storage.slots import SlotReadsSQL
from engramdb.storage.sqlite.sql import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    memory,
    placeholders,
    tombstone,
)

SQLITE = Dialect("?", rowid_only=" NOT INDEXED")


def runner(conn: sqlite3.Connection) -> Run:
    """Run one statement on ``conn`` and return its rows."""
    return lambda sql, params: conn.execute(sql, params).fetchall()


def many_runner(conn: sqlite3.Connection) -> RunMany:
    """Run one statement over many rows of parameters."""

    def run_many(sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)

    return run_many


class SQLiteTransaction(AgingWrites, AssistTransactionSQL, WebhookWritesSQL, SlotReadsSQL):
    """The Transaction port over the tenant's writer connection (records and relationships too)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(runner(conn), SQLITE, many_runner(conn))
        self._conn = conn
        self._seq: int | None = None

    def _change_seq(self) -> int:
        # One bump per transaction: every row it touches carries the same sequence number, and
        # vector copies in any process refresh exactly the rows stamped after their own.
        if self._seq is None:
            row = self._conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'change_seq' RETURNING value"
            ).fetchone()
            self._seq = int(row[0])
        return self._seq

    def _erased(self, scope_keys: Sequence[str]) -> None:
        # Copies refresh by change_seq, which cannot tell a deletion: a new erasure count of their
        # scope drops them.
        self._conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, '1') "
            "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            [(erasure_key(k),) for k in scope_keys],
        )

    def insert_memory(self, row: NewMemory) -> MemoryRecord | None:
        scope = row.scope
        cursor = self._conn.execute(
            """INSERT INTO memories (source, memory_id, scope_key, agent_id, profile_id,
                   privacy_scope, participant_scope_hash, sandbox_eligible, session_id,
                   subject_key, kind, text, embed_text, trust_class, origin, status, confidence,
                   observed_at, valid_from, valid_until, recorded_at, active_from, supersedes_id,
                   status_reason, event_json, change_seq, source_event_id)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT (scope_key, source, memory_id) DO NOTHING""",
            (
                row.source,
                row.memory_id,
                scope.scope_key,
                scope.agent_id,
                scope.profile_id,
                scope.privacy_scope,
                scope.participant_scope_hash,
                int(scope.sandbox_eligible),
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
                self._change_seq(),
                row.source_event_id,
            ),
        )
        if cursor.rowcount != 1:
            return None
        record = self._by_rowid(int(cursor.lastrowid or 0))
        self.link_derivation(record, row.source_event_id)
        return record

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        row = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope_key = ? AND source = ? AND memory_id = ?",
            (scope_key, source, memory_id),
        ).fetchone()
        return memory(row) if row else None

    def active_facts(self, scope_key: str, subject_key: str, kind: str) -> list[MemoryRecord]:
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope_key = ? AND subject_key = ? "
            "AND kind = ? AND source = 'MEMORY_FACT' AND status = 'active' ORDER BY rowid",
            (scope_key, subject_key, kind),
        ).fetchall()
        return [memory(r) for r in rows]

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        return history_rows(lambda sql, args: self._conn.execute(sql, args).fetchall(), SQLITE, scope_key, memory_id)

    def slot_facts(self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope_key = ? AND subject_key = ? "
            f"AND kind = ? AND source = 'MEMORY_FACT' AND status IN ({placeholders(statuses)}) ORDER BY rowid",
            (scope_key, subject_key, kind, *statuses),
        ).fetchall()
        return [memory(r) for r in rows]

    def set_status(
        self,
        rowid: int,
        *,
        status: str,
        reason: str | None,
        retired_at: str | None = None,
        superseded_by: str | None = None,
        active_from: str | None = None,
        invalid_at: str | None = None,
        supersedes: str | None = None,
    ) -> MemoryRecord:
        self._conn.execute(
            "UPDATE memories SET status = ?, status_reason = ?, retired_at = ?, "
            "superseded_by_id = coalesce(?, superseded_by_id), "
            "active_from = coalesce(?, active_from), "
            # a window only ever narrows: the earlier of the stored and the given end
            "invalid_at = min(coalesce(?, invalid_at), coalesce(invalid_at, ?)), "
            "supersedes_id = coalesce(supersedes_id, ?), change_seq = ? WHERE rowid = ?",
            (
                status,
                reason,
                retired_at,
                superseded_by,
                active_from,
                invalid_at,
                invalid_at,
                supersedes,
                self._change_seq(),
                rowid,
            ),
        )
        return self._by_rowid(rowid)

    def find_tombstone(self, scope_key: str, subject_key: str, kind: str, value_hash: str) -> Tombstone | None:
        row = self._conn.execute(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE scope_key = ? AND subject_key = ? "
            "AND kind = ? AND value_hash = ? AND lifted_at IS NULL",
            (scope_key, subject_key, kind, value_hash),
        ).fetchone()
        return tombstone(row) if row else None

    def add_tombstone(self, t: Tombstone) -> Tombstone:
        existing = self.find_tombstone(t.scope_key, t.subject_key, t.kind, t.value_hash)
        if existing is not None:
            return existing
        self._conn.execute(
            f"INSERT INTO tombstones ({TOMBSTONE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                t.tombstone_id,
                t.scope_key,
                t.subject_key,
                t.kind,
                t.value_hash,
                t.fact_id,
                t.reason,
                t.created_at,
                t.actor_key_id,
                None,
                None,
                None,
            ),
        )
        return t

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None:
        row = self._conn.execute(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tombstone_id = ?", (tombstone_id,)
        ).fetchone()
        return tombstone(row) if row else None

    def lift_tombstone(self, tombstone_id: str, *, at: str, by: str | None, reason: str) -> bool:
        cursor = self._conn.execute(
            "UPDATE tombstones SET lifted_at = ?, lifted_by = ?, lift_reason = ? "
            "WHERE tombstone_id = ? AND lifted_at IS NULL",
            (at, by, reason, tombstone_id),
        )
        return cursor.rowcount == 1

    def audit(self, draft: AuditDraft) -> AuditEntry:
        return self.audit_many([draft])[0]

    def audit_many(self, drafts: Sequence[AuditDraft]) -> list[AuditEntry]:
        keys = acting_keys(drafts)
        if (
            keys
            and self._conn.execute(
                f"SELECT 1 FROM api_keys WHERE revoked_at IS NOT NULL AND key_id IN ({placeholders(keys)})", keys
            ).fetchone()
        ):
            raise refuse_revoked()  # the transaction is rolled back: nothing of the write is kept
        last = self._conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
        at, entries = clock.now_text(), []
        for draft in drafts:  # chained here, written in one go
            entries.append(next_audit_entry(draft, last, at))
            last = (entries[-1].seq, entries[-1].hash)
        self._conn.executemany(
            f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({','.join('?' * AUDIT_WIDTH)})",
            [row_values(e) for e in entries],
        )
        return entries

    def put_meta(self, key: str, value: str) -> None:
        """Set a tenant-level setting (the policy document)."""
        self._conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def get_meta(self, key: str) -> str | None:
        """A tenant-level setting, read inside this transaction."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Run a read inside this transaction (sees its own writes)."""
        return self._conn.execute(sql, params).fetchall()

    def restore_fact(self, rowid: int, *, reason: str, at: str) -> MemoryRecord:
        self._conn.execute(
            "UPDATE memories SET status = 'active', status_reason = ?, retired_at = NULL, superseded_by_id = NULL, "
            "active_from = ?, change_seq = ? WHERE rowid = ?",
            (reason, at, self._change_seq(), rowid),
        )
        return self._by_rowid(rowid)

    def _assist_run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    def _slot_fetch(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]]:
        return self._conn.execute(sql, params).fetchall()  # a tenant's file holds only its rows

    def _by_rowid(self, rowid: int) -> MemoryRecord:
        row = self._conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE rowid = ?", (rowid,)).fetchone()
        return memory(row)
