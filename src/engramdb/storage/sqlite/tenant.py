"""One tenant in one SQLite file: memories, tombstones, keys and the audit chain; recall arms in memory."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from engramdb import traces
from engramdb.audit_chain.states import DIGEST_SCHEME
from engramdb.storage import erasure, participants
from engramdb.storage.aging import AgingStore
from engramdb.storage.assist.sql import AssistStoreSQL
from engramdb.storage.columns import audit_clause, equalities
from engramdb.storage.common import expire_rows
from engramdb.storage.coverage import DIGESTS_KEY, CoverageReads, ensure_covered
from engramdb.storage.fact_search.reads import FactSearchSQL
from engramdb.storage.fact_search.sql import Dialect
from engramdb.storage.feed.changes import ChangeLog
from engramdb.storage.feed.webhooks import WebhookLog
from engramdb.storage.history_walk import history_links, history_rows, version_rows
from engramdb.storage.knowledge.rows import Run
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
from engramdb.storage.review_queue import ReviewReadsSQL
from engramdb.storage.rows import VersionLink
from engramdb.storage.scope_cache import ScopeCache
from engramdb.storage.scope_copy import ScopeCopy
from engramdb.storage.scope_listing import ScopeListingSQL
from engramdb.storage.series import UsageSeriesStore
from engramdb.storage.sqlite import bulk, portable
from engramdb.storage.sqlite.connection import DEFAULT_BUSY_TIMEOUT, Connections
from engramdb.storage.sqlite.copy_reads import SQLiteCopyReads
from engramdb.storage.sqlite.embedding_jobs import SQLiteEmbeddingJobs
from engramdb.storage.sqlite.keys import SQLiteKeys
from engramdb.storage.sqlite.knowledge_store import SQLiteKnowledge
from engramdb.storage.sqlite.migrations import migrate
from engramdb.storage.sqlite.sql import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    audit_entry,
    episodes_clause,
    episodes_filter,
    facts_clause,
    memory,
    placeholders,
    tombstone,
)
from engramdb.storage.sqlite.transaction import SQLITE, SQLiteTransaction, runner

T = TypeVar("T")


class SQLiteTenantStore(
    SQLiteCopyReads,
    SQLiteKnowledge,
    AssistStoreSQL,
    participants.ParticipantSaltStore,
    SQLiteEmbeddingJobs,
    SQLiteKeys,
    FactSearchSQL,
    ScopeListingSQL,
    ReviewReadsSQL,
):
    """A tenant's store; thread-safe; several processes may open the same file."""

    capabilities = Capabilities(native_vector_index=False, lexical_ranking="bm25 (in-memory index, FTS5 porter tokens)")

    def __init__(
        self,
        path: Path,
        *,
        cache: ScopeCache,
        synchronous: str = "NORMAL",
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        self.path = path
        self._db = Connections(path, synchronous=synchronous, busy_timeout=busy_timeout)
        self._copies = cache
        migrate(self._db)
        super().__init__(self._db)
        self.aging = AgingStore(self._db.fetchall, SQLITE, self._write_many)
        self.usage = UsageSeriesStore(self._db.fetchall, SQLITE, self._write_many)
        self.changes = ChangeLog(self._db.fetchall, SQLITE)
        self.webhooks = WebhookLog(self._db.fetchall, self._atomic, SQLITE)
        self.coverage = CoverageReads(self._db.fetchall, SQLITE)
        if self.coverage.setting(DIGESTS_KEY) != DIGEST_SCHEME:  # a file from before the digests covered rows
            with self._db.write() as conn:
                ensure_covered(SQLiteTransaction(conn), CoverageReads(runner(conn), SQLITE), path.stem)
        self.connections = self._db  # a backup reads the file through them
        self._vector_model: str | None = None  # whose vectors the copies hold (the running embedder's)
        # A reading block's counters (change_seq, erasures), asked once: see reading().
        self._block: ContextVar[dict[str, Any] | None] = ContextVar(f"engram-block-{id(self)}", default=None)
        self._fact_search_fetch, self._fact_search_dialect = self._db.fetchall, Dialect("?")
        self._scope_listing_fetch, self._scope_listing_dialect = self._db.fetchall, Dialect("?")
        self._review_fetch, self._review_dialect = self._db.fetchall, Dialect("?")
        self._fact_search_copy = self._read_model_copy

    def _use_model(self, model: str | None) -> None:
        if model is not None:
            self._vector_model = model

    def _read_model_copy(self, scope_key: str, model: str, read: Callable[[ScopeCopy], T]) -> T:
        """Read the scope's copy of ``model``'s vectors, brought up to date."""
        self._use_model(model)
        return self._read_copy(scope_key, read)

    def save_embeddings(
        self, rowids: Sequence[int], vectors: Vector, model: str, *, texts: Sequence[str] | None = None
    ) -> None:
        super().save_embeddings(rowids, vectors, model, texts=texts)
        # These scopes are searchable now: the server loads their copies before their first recall.
        scopes = self._db.fetchall(
            f"SELECT DISTINCT scope_key FROM memories WHERE rowid IN ({placeholders(rowids)})", list(rowids)
        )
        for (scope_key,) in scopes:
            load = partial(self._read_model_copy, scope_key, model, len)
            self._copies.note_written(f"{self.path}:{scope_key}", load)

    def _write_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._db.write() as conn:
            conn.executemany(sql, rows)

    @contextmanager
    def _atomic(self) -> Iterator[Run]:
        with self._db.write() as conn:
            yield runner(conn)

    @contextmanager
    def transaction(self) -> Iterator[SQLiteTransaction]:
        with self._db.write() as conn:
            yield SQLiteTransaction(conn)

    def _assist_read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._db.fetchall(sql, params)

    # -- reads ----------------------------------------------------------------------------

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        row = self._db.fetchone(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE scope_key = ? AND source = ? AND memory_id = ?",
            (scope_key, source, memory_id),
        )
        return memory(row) if row else None

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
        where, params = facts_clause(filt, subject_key=subject_key, kind=kind, below=below)
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope_key = ?{where}"
        return [memory(r) for r in self._db.fetchall(sql, [scope_key, *params, limit])]

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
        where, params = episodes_clause(session_id=session_id, after=after, before=before, below=below)
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope_key = ?{where}"
        return [memory(r) for r in self._db.fetchall(sql, [scope_key, *params, limit])]

    def count_episodes(self, scope_key: str, *, session_id: str | None, after: str | None, before: str | None) -> int:
        where, params = episodes_filter(session_id=session_id, after=after, before=before)
        sql = f"SELECT count(*) FROM memories m WHERE m.scope_key = ?{where}"
        return int(self._db.fetchall(sql, [scope_key, *params])[0][0])

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        if not rowids:
            return {}
        columns = MEMORY_COLUMNS if with_event else MEMORY_COLUMNS.replace("event_json", "''")
        rows = self._db.fetchall(
            f"SELECT {columns} FROM memories WHERE rowid IN ({placeholders(rowids)})",
            list(rowids),
        )
        return {r[0]: memory(r) for r in rows}

    def facts_by_id(self, fact_id: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        rows = self._db.fetchall(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE source = 'MEMORY_FACT' "
            f"AND memory_id = ? AND status IN ({placeholders(statuses)})",
            [fact_id, *statuses],
        )
        return [memory(r) for r in rows]

    def memories_by_id(self, memory_id: str) -> list[tuple[MemoryRecord, ScopeColumns]]:
        rows = self._db.fetchall(
            f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, participant_scope_hash, "
            "sandbox_eligible FROM memories WHERE memory_id = ? ORDER BY rowid",
            [memory_id],
        )
        width = len(MEMORY_COLUMNS.split(","))
        return [
            (
                memory(r[:width]),
                ScopeColumns(r[3], r[width], r[width + 1], r[width + 2], r[width + 3], bool(r[width + 4])),
            )
            for r in rows
        ]

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        return history_rows(self._db.fetchall, SQLITE, scope_key, memory_id)

    def history_links(self, scope_key: str, memory_id: str) -> list[VersionLink]:
        return history_links(self._db.fetchall, SQLITE, scope_key, memory_id)

    def versions(self, scope_key: str, links: Sequence[VersionLink]) -> list[MemoryRecord]:
        return version_rows(self._db.fetchall, SQLITE, scope_key, links)

    def tombstones(
        self, scope_key: str, *, subject_key: str | None, kind: str | None, include_lifted: bool
    ) -> list[Tombstone]:
        named, values = equalities({"subject_key": subject_key, "kind": kind})
        sql = f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE scope_key = ?{named}"
        params: list[Any] = [scope_key, *values]
        if not include_lifted:
            sql += " AND lifted_at IS NULL"
        rows = self._db.fetchall(sql + " ORDER BY created_at", params)
        return [tombstone(r) for r in rows]

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None:
        row = self._db.fetchone(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tombstone_id = ?",
            (tombstone_id,),
        )
        return tombstone(row) if row else None

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        self._use_model(filt.vector_model)  # the copy holds one model's vectors: read the arms' one
        return self._read_copy(scope_key, lambda copy: copy.text_search(terms, filt, limit))

    def vector_candidates(self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        self._use_model(filt.vector_model)
        return self._read_copy(scope_key, lambda copy: copy.search(query, filt, limit, self._vectors))

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        return (
            traces.traced_arm("dense", lambda: self.vector_candidates(scope_key, query, filt, limit)),
            traces.traced_arm("lexical", lambda: self.text_candidates(scope_key, terms, filt, limit)),
        )

    def lexical_apart(self, scope_key: str) -> bool:
        return True  # both arms read the scope's in-memory copy, each on its own

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        return self._read_copy(scope_key, lambda copy: copy.adjacent(rowids))

    def word_evidence(
        self, scope_key: str, stems: Mapping[str, float], rowids: Sequence[int], spellings: Mapping[str, Sequence[str]]
    ) -> dict[int, float]:
        return self._read_copy(scope_key, lambda copy: copy.evidence(stems, rowids))

    def term_counts(self, scope_key: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        return self._read_copy(scope_key, lambda copy: (len(copy), {t: copy.document_frequency(t) for t in terms}))

    # -- structured fact search (storage/fact_search) -----------------------------------

    def rank_facts(
        self, scope_key: str, rowids: np.ndarray, query: Vector, words: Sequence[str], limit: int, model: str
    ) -> list[Candidate]:
        return self._read_model_copy(
            scope_key, model, lambda copy: copy.rank(query, words, rowids, limit, self._vectors)
        )

    # -- erasure ---------------------------------------------------------------------------

    def participant_scopes(self, participant_hash: str) -> list[str]:
        return erasure.participant_scopes(self._db.fetchall, SQLITE, participant_hash)

    def erasure_preview(self, scope_keys: Sequence[str]) -> Erasure:
        return erasure.preview(self._db.fetchall, SQLITE, scope_keys)

    def scrub(self) -> None:
        # secure_delete zeroed the deleted cells in the pages; the WAL still holds older frames.
        self._db.checkpoint()

    # -- lifecycle upkeep -------------------------------------------------------------------

    def expire_due(self, now: str, actor: AuditDraft) -> int:
        due = "SELECT rowid FROM memories WHERE status = 'active' AND valid_until <= ?"
        if not self._db.fetchone(due + " LIMIT 1", (now,)):
            return 0  # the common case costs one indexed read, no write lock
        with self.transaction() as tx:  # re-read under the lock
            return expire_rows(tx, [r[0] for r in tx.query(due, (now,))], now, actor)

    def get_policy(self) -> str | None:
        row = self._db.fetchone("SELECT value FROM meta WHERE key = 'policy'")
        return str(row[0]) if row else None

    def set_policy(self, policy_json: str, audit: AuditDraft) -> None:
        with self.transaction() as tx:
            tx.put_meta("policy", policy_json)
            tx.audit(audit)

    # -- audit ----------------------------------------------------------------------------

    def audit_entries(self, after_seq: int, limit: int, filt: AuditFilter | None = None) -> list[AuditEntry]:
        where, params = audit_clause(filt)
        rows = self._db.fetchall(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE seq > ?{where} ORDER BY seq LIMIT ?",
            (after_seq, *params, limit),
        )
        return [audit_entry(r) for r in rows]

    def export_rows(self, scope_keys: Sequence[str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._db.reading() as conn:
            yield from portable.export_rows(conn, scope_keys)

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        with self._db.write() as conn:
            return portable.import_rows(conn, rows, self.path.stem)

    def bulk_load(self, rows: Sequence[NewMemory], vectors: Vector, model: str, audits: Sequence[AuditDraft]) -> int:
        with self._db.write() as conn:
            return bulk.load(conn, rows, vectors, model, audits)

    def optimize(self) -> None:
        """Refresh the query planner's statistics (``PRAGMA optimize``)."""
        with self._db.write() as conn:
            conn.execute("PRAGMA optimize")

    def close(self) -> None:
        self._db.close()
