"""A write transaction on one PostgreSQL tenant.

It starts by bumping the tenant's change counter, which row-locks it until commit: writers of a
tenant are serialised (as SQLite's ``BEGIN IMMEDIATE`` does), so the lifecycle's read-then-write
decisions and the audit chain's sequence stay consistent; other tenants are not blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from engramdb import clock
from engramdb.storage.aging import AgingWrites
from engramdb.storage.assist.sql import AssistTransactionSQL
from engramdb.storage.columns import (
    AUDIT_COLUMNS,
    AUDIT_WIDTH,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    lexical_body,
    memory_record,
    placeholders,
)
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


def runner(conn: psycopg.Connection, prepare: bool | None = None) -> Run:
    """Run one statement on ``conn`` and return its rows (none for a statement without them);
    ``prepare=False`` plans it for its values each time (psycopg prepares a statement's fifth run,
    and PostgreSQL may then keep one generic plan for every value)."""

    def run(sql: str, params: Sequence[Any]) -> list[Any]:
        cursor = conn.execute(sql, params, prepare=prepare)
        return cursor.fetchall() if cursor.description else []

    return run


def many_runner(conn: psycopg.Connection) -> RunMany:
    """Run one statement over many rows of parameters (psycopg pipelines them)."""

    def run_many(sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(sql, rows)

    return run_many


class PostgresTransaction(AgingWrites, AssistTransactionSQL, WebhookWritesSQL, SlotReadsSQL):
    """The Transaction port over one connection inside one transaction (records and relationships too)."""

    def __init__(self, conn: psycopg.Connection, tenant: str) -> None:
        dialect = Dialect("%s", tenant, links_as_sets=True, share_lock=" FOR SHARE")
        # A fact's link to its episode: the generic plan of its lookup read every memory of the tenant.
        super().__init__(runner(conn), dialect, many_runner(conn), runner(conn, prepare=False))
        self._conn = conn
        self._tenant = tenant
        row = conn.execute(
            "UPDATE meta SET value = (value::bigint + 1)::text "
            "WHERE tenant = %s AND key = 'change_seq' RETURNING value",
            (tenant,),
        ).fetchone()
        self.seq = int(row[0]) if row else 0

    def _erased(self, scope_keys: Sequence[str]) -> None:
        # In-memory copies of large scopes refresh by change_seq, which cannot tell a deletion: a
        # new erasure count of their scope drops them.
        with self._conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO meta (tenant, key, value) VALUES (%s, %s, '1') "
                "ON CONFLICT (tenant, key) DO UPDATE SET value = (meta.value::bigint + 1)::text",
                [(self._tenant, erasure_key(k)) for k in scope_keys],
            )

    def insert_memory(self, row: NewMemory) -> MemoryRecord | None:
        scope = row.scope
        inserted = self._conn.execute(
            f"""INSERT INTO memories (tenant, source, memory_id, scope_key, agent_id, profile_id,
                   privacy_scope, participant_scope_hash, sandbox_eligible, session_id,
                   subject_key, kind, text, embed_text, lexical_body, trust_class, origin, status,
                   confidence, observed_at, valid_from, valid_until, recorded_at, active_from,
                   supersedes_id, status_reason, event_json, change_seq, source_event_id)
               VALUES ({",".join(["%s"] * 29)})
               ON CONFLICT (tenant, scope_key, source, memory_id) DO NOTHING
               RETURNING {MEMORY_COLUMNS}""",
            (
                self._tenant,
                row.source,
                row.memory_id,
                scope.scope_key,
                scope.agent_id,
                scope.profile_id,
                scope.privacy_scope,
                scope.participant_scope_hash,
                scope.sandbox_eligible,
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
                self.seq,
                row.source_event_id,
            ),
        ).fetchone()
        if not inserted:
            return None
        record = memory_record(inserted)
        self.link_derivation(record, row.source_event_id)
        return record

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        row = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
            "AND source = %s AND memory_id = %s",
            (self._tenant, scope_key, source, memory_id),
        ).fetchone()
        return memory_record(row) if row else None

    def active_facts(self, scope_key: str, subject_key: str, kind: str) -> list[MemoryRecord]:
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
            "AND subject_key = %s AND kind = %s AND source = 'MEMORY_FACT' AND status = 'active' "
            "ORDER BY rowid FOR UPDATE",
            (self._tenant, scope_key, subject_key, kind),
        ).fetchall()
        return [memory_record(r) for r in rows]

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        return history_rows(runner(self._conn), self._d, scope_key, memory_id)

    def slot_facts(self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        rows = self._conn.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
            "AND subject_key = %s AND kind = %s AND source = 'MEMORY_FACT' "
            f"AND status IN ({placeholders(statuses, '%s')}) ORDER BY rowid FOR UPDATE",
            (self._tenant, scope_key, subject_key, kind, *statuses),
        ).fetchall()
        return [memory_record(r) for r in rows]

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
        row = self._conn.execute(
            "UPDATE memories SET status = %s, status_reason = %s, retired_at = %s, "
            "superseded_by_id = coalesce(%s, superseded_by_id), "
            "active_from = coalesce(%s, active_from), "
            "invalid_at = least(%s, invalid_at), "  # a window only ever narrows (least skips NULLs)
            "supersedes_id = coalesce(supersedes_id, %s), "
            f"change_seq = %s WHERE tenant = %s AND rowid = %s RETURNING {MEMORY_COLUMNS}",
            (
                status,
                reason,
                retired_at,
                superseded_by,
                active_from,
                invalid_at,
                supersedes,
                self.seq,
                self._tenant,
                rowid,
            ),
        ).fetchone()
        assert row is not None, rowid  # the caller read this row earlier in the same transaction
        return memory_record(row)

    def find_tombstone(self, scope_key: str, subject_key: str, kind: str, value_hash: str) -> Tombstone | None:
        row = self._conn.execute(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND scope_key = %s "
            "AND subject_key = %s AND kind = %s AND value_hash = %s AND lifted_at IS NULL",
            (self._tenant, scope_key, subject_key, kind, value_hash),
        ).fetchone()
        return Tombstone(*row) if row else None

    def add_tombstone(self, t: Tombstone) -> Tombstone:
        existing = self.find_tombstone(t.scope_key, t.subject_key, t.kind, t.value_hash)
        if existing is not None:
            return existing
        self._conn.execute(
            f"INSERT INTO tombstones (tenant, {TOMBSTONE_COLUMNS}) VALUES ({','.join(['%s'] * 13)})",
            (
                self._tenant,
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
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND tombstone_id = %s",
            (self._tenant, tombstone_id),
        ).fetchone()
        return Tombstone(*row) if row else None

    def lift_tombstone(self, tombstone_id: str, *, at: str, by: str | None, reason: str) -> bool:
        cursor = self._conn.execute(
            "UPDATE tombstones SET lifted_at = %s, lifted_by = %s, lift_reason = %s "
            "WHERE tenant = %s AND tombstone_id = %s AND lifted_at IS NULL",
            (at, by, reason, self._tenant, tombstone_id),
        )
        return cursor.rowcount == 1

    def audit(self, draft: AuditDraft) -> AuditEntry:
        return self.audit_many([draft])[0]

    def audit_many(self, drafts: Sequence[AuditDraft]) -> list[AuditEntry]:
        # The chain's last entry, and whether a key these entries act for was revoked: one round trip.
        found = self._conn.execute(
            "SELECT a.seq, a.hash, EXISTS (SELECT 1 FROM api_keys WHERE tenant = %s AND key_id = ANY(%s) "
            "AND revoked_at IS NOT NULL) FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT seq, hash FROM audit_log "
            "WHERE tenant = %s ORDER BY seq DESC LIMIT 1) AS a ON true",
            (self._tenant, acting_keys(drafts), self._tenant),
        ).fetchone()
        assert found is not None  # the query has one row whatever the tables hold
        seq, hash_, revoked = found
        if revoked:
            raise refuse_revoked()  # the transaction is rolled back: nothing of the write is kept
        last = None if seq is None else (seq, hash_)
        at, entries = clock.now_text(), []
        for draft in drafts:  # chained here, written in one go
            entries.append(next_audit_entry(draft, last, at))
            last = (entries[-1].seq, entries[-1].hash)
        with self._conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO audit_log (tenant, {AUDIT_COLUMNS}) VALUES ({','.join(['%s'] * (AUDIT_WIDTH + 1))})",
                [(self._tenant, *row_values(e)) for e in entries],
            )
        return entries

    def put_meta(self, key: str, value: str) -> None:
        self._conn.execute(
            "INSERT INTO meta (tenant, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
            (self._tenant, key, value),
        )

    def get_meta(self, key: str) -> str | None:
        """A tenant-level setting, read inside this transaction."""
        cursor = self._conn.execute("SELECT value FROM meta WHERE tenant = %s AND key = %s", (self._tenant, key))
        found = cursor.fetchone()
        return str(found[0]) if found else None

    def query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        """Run a read inside this transaction (``%s`` placeholders)."""
        return self._conn.execute(sql, params).fetchall()

    def restore_fact(self, rowid: int, *, reason: str, at: str) -> MemoryRecord:
        row = self._conn.execute(
            "UPDATE memories SET status = 'active', status_reason = %s, retired_at = NULL, superseded_by_id = NULL, "
            f"active_from = %s, change_seq = %s WHERE tenant = %s AND rowid = %s RETURNING {MEMORY_COLUMNS}",
            (reason, at, self.seq, self._tenant, rowid),
        ).fetchone()
        assert row is not None, rowid  # the caller read this row earlier in the same transaction
        return memory_record(row)

    def _assist_run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cursor = self._conn.execute(sql.replace("?", "%s"), params)
        return cursor.fetchall() if cursor.description else []

    _slot_collate = ' COLLATE "C"'
    _slot_lock = " FOR UPDATE"

    def _slot_fetch(self, sql: str, params: Sequence[Any]) -> Sequence[Sequence[Any]]:
        return self._conn.execute(sql.replace("?", "%s"), params).fetchall()

    def _slot_owner(self) -> tuple[str, list[Any]]:
        return "tenant = ? AND ", [self._tenant]  # every index of memories leads with the tenant
