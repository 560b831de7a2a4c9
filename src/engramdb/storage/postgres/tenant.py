"""One tenant on PostgreSQL: the same port as SQLite, with pgvector and full-text search.

Reads, writes, keys and the audit log are here; the recall arms are in storage/postgres/search.py.
Every statement runs on a connection from ``_conn()``, whose block turns driver errors into
EngramDB errors (storage/postgres/sqlstates.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from engramdb.audit_chain.states import DIGEST_SCHEME
from engramdb.storage import erasure
from engramdb.storage.aging import AgingStore
from engramdb.storage.assist.sql import AssistStoreSQL
from engramdb.storage.columns import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    audit_clause,
    episodes_clause,
    episodes_filter,
    equalities,
    facts_clause,
    memory_record,
)
from engramdb.storage.common import expire_rows
from engramdb.storage.coverage import DIGESTS_KEY, CoverageReads, ensure_covered
from engramdb.storage.fact_search.reads import FactSearchSQL
from engramdb.storage.fact_search.sql import Dialect
from engramdb.storage.feed.changes import ChangeLog
from engramdb.storage.feed.webhooks import WebhookLog
from engramdb.storage.history_walk import history_links, history_rows, version_rows
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.participants import ParticipantSaltStore
from engramdb.storage.port import (
    AuditDraft,
    AuditEntry,
    AuditFilter,
    Candidate,
    CandidateFilter,
    Capabilities,
    Erasure,
    ListPosition,
    MemoryRecord,
    NewMemory,
    ScopeColumns,
    Source,
    Tombstone,
    Vector,
)
from engramdb.storage.postgres import bulk, portable
from engramdb.storage.postgres.embedding_jobs import PostgresEmbeddingJobs
from engramdb.storage.postgres.keys import PostgresKeys
from engramdb.storage.postgres.knowledge_store import PostgresKnowledge
from engramdb.storage.postgres.search import PostgresSearch, ReadingBlock
from engramdb.storage.postgres.sqlstates import translated
from engramdb.storage.postgres.timeouts import maintenance
from engramdb.storage.postgres.transaction import PostgresTransaction, runner
from engramdb.storage.postgres.tsquery import tsvector_evidence
from engramdb.storage.review_queue import ReviewReadsSQL
from engramdb.storage.rows import VersionLink
from engramdb.storage.scope_listing import ScopeListingSQL
from engramdb.storage.series import UsageSeriesStore

if TYPE_CHECKING:
    from engramdb.storage.postgres.store import PostgresStore


class PostgresTenantStore(
    PostgresKnowledge,
    AssistStoreSQL,
    ParticipantSaltStore,
    PostgresEmbeddingJobs,
    PostgresKeys,
    FactSearchSQL,
    ScopeListingSQL,
    ReviewReadsSQL,
):
    """A tenant's store on PostgreSQL (row-level security keeps it to its own rows)."""

    capabilities = Capabilities(native_vector_index=False, lexical_ranking="ts_rank (tsvector)")

    def __init__(self, store: PostgresStore, name: str) -> None:
        self._store = store
        self.name = name
        self.path = f"postgresql:{store.schema}:{name}"
        self._held: ContextVar[ReadingBlock | None] = ContextVar(f"engram-held-{id(self)}", default=None)
        self._search = PostgresSearch(name, self._all, self._held, store.scope_copies, store.copy_min_rows)
        super().__init__(name, self._unprepared, self._conn, store.searches)
        self.aging = AgingStore(self._all, self._dialect, self._write_many, maintenance)
        self.usage = UsageSeriesStore(self._all, self._dialect, self._write_many)
        self.changes = ChangeLog(self._all, self._dialect)
        self.webhooks = WebhookLog(self._all, self._atomic, self._dialect)
        self._fact_search_fetch, self._fact_search_dialect = self._unprepared, Dialect("%s", tenant=name)
        self._scope_listing_fetch, self._scope_listing_dialect = self._unprepared, Dialect("%s", tenant=name)
        self._review_fetch, self._review_dialect = self._all, Dialect("%s", tenant=name)
        self._fact_search_copy = self._search.read_copy
        self.coverage = CoverageReads(self._all, self._dialect)
        if self.coverage.setting(DIGESTS_KEY) != DIGEST_SCHEME:  # a tenant from before the digests covered rows
            with self._conn() as conn:
                ensure_covered(PostgresTransaction(conn, name), CoverageReads(runner(conn), self._dialect), name)

    def _write_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._conn() as conn, conn.cursor() as cursor:
            cursor.executemany(sql, rows)

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        held = self._held.get()
        if held is not None:  # inside reading(): one connection and one transaction for all
            if held.conn is None:  # taken at the first read, not before (recall embeds first)
                held.conn = held.stack.enter_context(self._store.connection(self.name))
            with translated():  # the held connection's own block is still open around this one
                yield held.conn
            return
        with self._store.connection(self.name) as conn:
            yield conn

    @contextmanager
    def _atomic(self) -> Iterator[Run]:
        with self._conn() as conn:
            yield runner(conn)

    @contextmanager
    def reading(self) -> Iterator[PostgresTenantStore]:
        """Serve every read in this block from one connection and one transaction.

        A recall makes four to six reads; a pooled checkout, a transaction and the tenant setting
        for each was most of its time (bench/RESULTS.md).
        """
        if self._held.get() is not None:
            yield self
            return
        with ExitStack() as stack:
            token = self._held.set(ReadingBlock(stack))
            try:
                yield self
            finally:
                self._held.reset(token)

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        with self._conn() as conn:
            yield PostgresTransaction(conn, self.name)

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._conn() as conn:
            return conn.execute(sql, params).fetchall()

    def _assist_read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._all(sql.replace("?", "%s"), params)

    def _unprepared(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        # A where-query's best plan depends on its values (a rare equality, a common one): never let
        # a prepared statement settle on a generic plan that ignores them.
        with self._conn() as conn:
            cursor = conn.execute(sql, params, prepare=False)
            return cursor.fetchall() if cursor.description else []

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    # -- erasure ---------------------------------------------------------------------------

    def participant_scopes(self, participant_hash: str) -> list[str]:
        return erasure.participant_scopes(self._all, self._dialect, participant_hash)

    def erasure_preview(self, scope_keys: Sequence[str]) -> Erasure:
        return erasure.preview(self._all, self._dialect, scope_keys)

    def scrub(self) -> None:
        self._search.forget_cached()
        self._store.rewrite_tables()

    # -- reads ----------------------------------------------------------------------------

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        row = self._one(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
            "AND source = %s AND memory_id = %s",
            (self.name, scope_key, source, memory_id),
        )
        return memory_record(row) if row else None

    def list_facts(
        self,
        scope_key: str,
        *,
        subject_key: str | None,
        kind: str | None,
        filt: CandidateFilter,
        below: ListPosition | None,
        limit: int,
    ) -> list[MemoryRecord]:
        where, params = facts_clause(filt, subject_key=subject_key, kind=kind, below=below, mark="%s")
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = %s AND m.scope_key = %s{where}"
        return [memory_record(r) for r in self._all(sql, [self.name, scope_key, *params, limit])]

    def list_episodes(
        self,
        scope_key: str,
        *,
        session_id: str | None,
        after: str | None,
        before: str | None,
        below: ListPosition | None,
        limit: int,
    ) -> list[MemoryRecord]:
        where, params = episodes_clause(session_id=session_id, after=after, before=before, below=below, mark="%s")
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = %s AND m.scope_key = %s{where}"
        return [memory_record(r) for r in self._all(sql, [self.name, scope_key, *params, limit])]

    def count_episodes(self, scope_key: str, *, session_id: str | None, after: str | None, before: str | None) -> int:
        where, params = episodes_filter(session_id=session_id, after=after, before=before, mark="%s")
        sql = f"SELECT count(*) FROM memories m WHERE m.tenant = %s AND m.scope_key = %s{where}"
        return int(self._all(sql, [self.name, scope_key, *params])[0][0])

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        if not rowids:
            return {}
        columns = MEMORY_COLUMNS if with_event else MEMORY_COLUMNS.replace("event_json", "''")
        rows = self._all(
            f"SELECT {columns} FROM memories WHERE tenant = %s AND rowid = ANY(%s)",
            (self.name, list(rowids)),
        )
        return {r[0]: memory_record(r) for r in rows}

    def facts_by_id(self, fact_id: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        rows = self._all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND source = 'MEMORY_FACT' "
            "AND memory_id = %s AND status = ANY(%s)",
            (self.name, fact_id, list(statuses)),
        )
        return [memory_record(r) for r in rows]

    def memories_by_id(self, memory_id: str) -> list[tuple[MemoryRecord, ScopeColumns]]:
        rows = self._all(
            f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, participant_scope_hash, "
            "sandbox_eligible FROM memories WHERE tenant = %s AND memory_id = %s ORDER BY rowid",
            (self.name, memory_id),
        )
        width = len(MEMORY_COLUMNS.split(","))
        return [
            (
                memory_record(r[:width]),
                ScopeColumns(r[3], r[width], r[width + 1], r[width + 2], r[width + 3], bool(r[width + 4])),
            )
            for r in rows
        ]

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        return history_rows(self._all, self._dialect, scope_key, memory_id)

    def history_links(self, scope_key: str, memory_id: str) -> list[VersionLink]:
        return history_links(self._all, self._dialect, scope_key, memory_id)

    def versions(self, scope_key: str, links: Sequence[VersionLink]) -> list[MemoryRecord]:
        return version_rows(self._all, self._dialect, scope_key, links)

    def tombstones(
        self, scope_key: str, *, subject_key: str | None, kind: str | None, include_lifted: bool
    ) -> list[Tombstone]:
        named, values = equalities({"subject_key": subject_key, "kind": kind}, "%s")
        sql = f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND scope_key = %s{named}"
        args: list[Any] = [self.name, scope_key, *values]
        if not include_lifted:
            sql += " AND lifted_at IS NULL"
        return [Tombstone(*r) for r in self._all(sql + " ORDER BY created_at", args)]

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None:
        row = self._one(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND tombstone_id = %s",
            (self.name, tombstone_id),
        )
        return Tombstone(*row) if row else None

    # -- the recall arms (storage/postgres/search.py) ------------------------------------------

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        return self._search.text_candidates(scope_key, terms, filt, limit)

    def vector_candidates(self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        return self._search.vector_candidates(scope_key, query, filt, limit)

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        return self._search.candidates(scope_key, query, terms, filt, limit)

    def lexical_apart(self, scope_key: str) -> bool:
        # A small scope's one statement reads both arms, the counts and the neighbours at once.
        return self._search.uses_copy(scope_key)

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        return self._search.adjacent(scope_key, rowids)

    def word_evidence(
        self, scope_key: str, stems: Mapping[str, float], rowids: Sequence[int], spellings: Mapping[str, Sequence[str]]
    ) -> dict[int, float]:
        if not self._search.uses_copy(scope_key):  # a small scope is read by SQL, without a copy
            return tsvector_evidence(self._all, self.name, scope_key, stems, rowids, spellings)
        return self._search.read_copy(scope_key, None, lambda copy: copy.evidence(stems, rowids))

    def term_counts(self, scope_key: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        return self._search.term_counts(scope_key, terms)

    # -- structured fact search (storage/fact_search) -------------------------------------------

    def rank_facts(
        self, scope_key: str, rowids: np.ndarray, query: Vector, words: Sequence[str], limit: int, model: str
    ) -> list[Candidate]:
        return self._search.rank(scope_key, rowids, query, words, limit, model)

    # -- lifecycle upkeep -------------------------------------------------------------------

    def expire_due(self, now: str, actor: AuditDraft) -> int:
        due = "SELECT rowid FROM memories WHERE tenant = %s AND status = 'active' AND valid_until <= %s"
        if not self._one(due + " LIMIT 1", (self.name, now)):
            return 0
        with self.transaction() as tx:  # re-read under the tenant's write lock
            return expire_rows(tx, [r[0] for r in tx.query(due, (self.name, now))], now, actor)

    def get_policy(self) -> str | None:
        row = self._one("SELECT value FROM meta WHERE tenant = %s AND key = 'policy'", (self.name,))
        return str(row[0]) if row else None

    def set_policy(self, policy_json: str, audit: AuditDraft) -> None:
        with self.transaction() as tx:
            tx.put_meta("policy", policy_json)
            tx.audit(audit)

    # -- audit ----------------------------------------------------------------------------

    def audit_entries(self, after_seq: int, limit: int, filt: AuditFilter | None = None) -> list[AuditEntry]:
        where, params = audit_clause(filt, mark="%s")
        rows = self._all(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE tenant = %s AND seq > %s{where} ORDER BY seq LIMIT %s",
            (self.name, after_seq, *params, limit),
        )
        return [AuditEntry(*r) for r in rows]

    def export_rows(self, scope_keys: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        with ExitStack() as stack:
            with maintenance():  # only while its transaction begins: the caller runs between the rows
                conn = stack.enter_context(self._conn())
            yield from portable.export_rows(conn, self.name, scope_keys)

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        with maintenance(), self._conn() as conn:
            return portable.import_rows(conn, self.name, rows)

    def bulk_load(self, rows: Sequence[NewMemory], vectors: Vector, model: str, audits: Sequence[AuditDraft]) -> int:
        with maintenance(), self.transaction() as tx:
            return bulk.load(tx._conn, self.name, tx.seq, rows, vectors, model, audits)

    def close(self) -> None:
        """Connections belong to the store's pool; nothing to release per tenant."""
