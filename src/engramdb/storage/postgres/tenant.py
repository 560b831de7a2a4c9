"""One tenant on PostgreSQL: the same port as SQLite, with pgvector and full-text search.

The vector arm is exact: the scope filter runs first on a B-tree and the rows left are sorted by
cosine distance; there is deliberately no approximate index, because pgvector's HNSW, once
present, is used for scope-filtered queries too and returns a fraction of the true neighbours.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from engramdb.errors import ConflictError
from engramdb.storage.columns import (
    AUDIT_COLUMNS,
    MEMORY_COLUMNS,
    TOMBSTONE_COLUMNS,
    filter_clause,
)
from engramdb.storage.common import LRU, expire_rows, walk_history
from engramdb.storage.port import (
    AuditDraft,
    AuditEntry,
    Candidate,
    CandidateFilter,
    Capabilities,
    EmbedJob,
    EpisodePosition,
    KeyRecord,
    MemoryRecord,
    ScopeColumns,
    Source,
    Tombstone,
    Vector,
)
from engramdb.storage.postgres import portable
from engramdb.storage.postgres.sqlstates import translated
from engramdb.storage.postgres.transaction import PostgresTransaction

if TYPE_CHECKING:
    from engramdb.storage.postgres.store import PostgresStore

_KEY_COLUMNS = "key_id, role, grant_json, secret_hash, created_at, label, revoked_at"


def _tsquery(terms: Sequence[str]) -> str:
    # Terms are \w+ words; quoting each keeps any that tsquery would parse as syntax literal.
    return " | ".join("'" + t.replace("'", "''").replace("\\", "") + "'" for t in terms)


@dataclass
class _Held:
    """The connection a ``reading()`` block shares, once its first read took it, and what its
    searches learned: session neighbours (scope key -> rowid -> (before, after)) and the scope's
    size and word frequencies (scope key -> (size, word -> memories containing it))."""

    stack: ExitStack
    conn: Any = None
    neighbours: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    frequencies: dict[str, tuple[int, dict[str, int]]] = field(default_factory=dict)


# Both arms in one pass over the scope: the rows are read once, and each row's episodes one and
# two before and after it in its session come along (window functions over the whole scope, so
# rows the filter leaves out still link), which spares recall's neighbour lookups a round trip
# and a probe per candidate. The same pass counts the scope's rows and, per query word, the rows
# containing it (any status, as term_counts() does), for recall's lexical weight. {query} is the
# text query, {words} one tsquery per word, {matches} the text match, {hits} one 0/1 per word
# and {eligible} the filter's conjuncts; arm 2 is that count: (2, size, NULL, per-word counts).
_CANDIDATES = """
WITH scope AS MATERIALIZED (  -- scores first, so the sort below moves narrow rows
    SELECT m.rowid, m.source, m.session_id,
           CASE WHEN m.embed_state = 'ready' AND vector_dims(m.embedding) = %s AND f.ok
                THEN m.embedding <=> %s END AS distance,
           CASE WHEN {matches} AND f.ok THEN ts_rank(m.tsv, q.q)::float8 END AS rank,
           CASE WHEN {matches} THEN ARRAY[{hits}]::int[] END AS hits
    FROM memories m
    CROSS JOIN (SELECT {query} AS q, ARRAY[{words}]::tsquery[] AS words) q  -- parsed once, not per row
    CROSS JOIN LATERAL (SELECT TRUE{eligible} AS ok) f
    WHERE m.tenant = %s AND m.scope_key = %s
), linked AS (
    SELECT s.rowid, s.distance, s.rank,
           CASE WHEN s.source = 'EPISODE' AND s.session_id IS NOT NULL THEN ARRAY[
               lag(s.rowid, 2, -1) OVER w, lag(s.rowid, 1, -1) OVER w,
               lead(s.rowid, 1, -1) OVER w, lead(s.rowid, 2, -1) OVER w
           ] END AS around
    FROM scope s
    WINDOW w AS (PARTITION BY s.source, s.session_id COLLATE "C" ORDER BY s.rowid)  -- bytewise: cheaper
)
(SELECT 0, rowid, 1 - distance, around FROM linked WHERE distance IS NOT NULL
 ORDER BY distance, rowid LIMIT %s)
UNION ALL
(SELECT 1, rowid, rank, around FROM linked WHERE rank IS NOT NULL
 ORDER BY rank DESC, rowid LIMIT %s)
UNION ALL
(SELECT 2, count(*), NULL, ARRAY[{counts}]::bigint[] FROM scope)
"""


def _learn(known: dict[int, tuple[int, int]], rowid: int, before_2: int, before: int, after: int, after_2: int) -> None:
    """Record a row's neighbours, and what they imply for the neighbours themselves."""
    known[rowid] = (before, after)
    if before >= 0:
        known[before] = (before_2, rowid)
    if after >= 0:
        known[after] = (rowid, after_2)


class PostgresTenantStore:
    """A tenant's store on PostgreSQL (row-level security keeps it to its own rows)."""

    capabilities = Capabilities(native_vector_index=False, lexical_ranking="ts_rank (tsvector)")

    def __init__(self, store: PostgresStore, name: str) -> None:
        self._store = store
        self.name = name
        self.path = f"postgresql:{store.schema}:{name}"
        self._term_counts: LRU[tuple[str, str], tuple[int, int]] = LRU(50_000)
        self._held: ContextVar[Any] = ContextVar(f"engram-held-{id(self)}", default=None)

    @contextmanager
    def _conn(self) -> Iterator[Any]:
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
    def reading(self) -> Iterator[PostgresTenantStore]:
        """Serve every read in this block from one connection and one transaction.

        A recall makes four to six reads; a pooled checkout, a transaction and the tenant setting
        for each was most of its time (bench/RESULTS.md).
        """
        if self._held.get() is not None:
            yield self
            return
        with ExitStack() as stack:
            token = self._held.set(_Held(stack))
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
            return conn.execute(sql, params).fetchall()  # type: ignore[no-any-return]

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    # -- reads ----------------------------------------------------------------------------

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        row = self._one(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
            "AND source = %s AND memory_id = %s",
            (self.name, scope_key, source, memory_id),
        )
        return MemoryRecord(*row) if row else None

    def list_facts(
        self, scope_key: str, *, subject_key: str | None, kind: str | None,
        filt: CandidateFilter, limit: int,
    ) -> list[MemoryRecord]:  # fmt: skip
        where, params = filter_clause(filt, mark="%s")
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = %s AND m.scope_key = %s{where}"
        args: list[Any] = [self.name, scope_key, *params]
        for column, value in (("subject_key", subject_key), ("kind", kind)):
            if value is not None:
                sql += f" AND m.{column} = %s"
                args.append(value)
        rows = self._all(sql + " ORDER BY m.recorded_at DESC, m.rowid DESC LIMIT %s", [*args, limit])
        return [MemoryRecord(*r) for r in rows]

    def list_episodes(
        self, scope_key: str, *, session_id: str | None, after: str | None, before: str | None,
        below: EpisodePosition | None, limit: int,
    ) -> list[MemoryRecord]:  # fmt: skip
        sql = (f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = %s AND m.scope_key = %s "
               "AND m.source = 'EPISODE' AND m.status = 'active'")  # fmt: skip
        args: list[Any] = [self.name, scope_key]
        for clause, value in (("m.session_id = %s", session_id), ("m.observed_at >= %s", after),
                              ("m.observed_at < %s", before)):  # fmt: skip
            if value is not None:
                sql += f" AND {clause}"
                args.append(value)
        if below is not None:
            sql += " AND (m.observed_at, m.rowid) < (%s, %s)"
            args += [below.observed_at, below.rowid]
        rows = self._all(sql + " ORDER BY m.observed_at DESC, m.rowid DESC LIMIT %s", [*args, limit])
        return [MemoryRecord(*r) for r in rows]

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        if not rowids:
            return {}
        columns = MEMORY_COLUMNS if with_event else MEMORY_COLUMNS.replace("event_json", "''")
        rows = self._all(
            f"SELECT {columns} FROM memories WHERE tenant = %s AND rowid = ANY(%s)",
            (self.name, list(rowids)),
        )
        return {r[0]: MemoryRecord(*r) for r in rows}

    def facts_by_id(self, fact_id: str, statuses: Sequence[str]) -> list[MemoryRecord]:
        rows = self._all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND source = 'MEMORY_FACT' "
            "AND memory_id = %s AND status = ANY(%s)",
            (self.name, fact_id, list(statuses)),
        )
        return [MemoryRecord(*r) for r in rows]

    def review_queue(
        self, *, kind: str | None, subject_key: str | None, recorded_before: str | None, limit: int
    ) -> list[tuple[MemoryRecord, ScopeColumns]]:
        sql = (f"SELECT {MEMORY_COLUMNS}, agent_id, profile_id, privacy_scope, "
               "participant_scope_hash, sandbox_eligible FROM memories WHERE tenant = %s "
               "AND source = 'MEMORY_FACT' AND status = 'pending_review'")  # fmt: skip
        args: list[Any] = [self.name]
        for column, value in (("kind", kind), ("subject_key", subject_key)):
            if value is not None:
                sql += f" AND {column} = %s"
                args.append(value)
        if recorded_before is not None:
            sql += " AND recorded_at < %s"
            args.append(recorded_before)
        rows = self._all(sql + " ORDER BY recorded_at, rowid LIMIT %s", [*args, limit])
        width = len(MEMORY_COLUMNS.split(","))
        return [(MemoryRecord(*r[:width]), ScopeColumns(r[3], *r[width:width + 4], bool(r[width + 4])))
                for r in rows]  # fmt: skip

    def history(self, scope_key: str, memory_id: str) -> list[MemoryRecord]:
        def linked(ids: list[str]) -> list[MemoryRecord]:
            rows = self._all(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE tenant = %s AND scope_key = %s "
                "AND source = 'MEMORY_FACT' AND (memory_id = ANY(%s) OR supersedes_id = ANY(%s) "
                "OR superseded_by_id = ANY(%s))",
                (self.name, scope_key, ids, ids, ids),
            )
            return [MemoryRecord(*r) for r in rows]

        return walk_history(memory_id, linked)

    def tombstones(
        self, scope_key: str, *, subject_key: str | None, kind: str | None, include_lifted: bool
    ) -> list[Tombstone]:
        sql = f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND scope_key = %s"
        args: list[Any] = [self.name, scope_key]
        for column, value in (("subject_key", subject_key), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = %s"
                args.append(value)
        if not include_lifted:
            sql += " AND lifted_at IS NULL"
        return [Tombstone(*r) for r in self._all(sql + " ORDER BY created_at", args)]

    def get_tombstone(self, tombstone_id: str) -> Tombstone | None:
        row = self._one(
            f"SELECT {TOMBSTONE_COLUMNS} FROM tombstones WHERE tenant = %s AND tombstone_id = %s",
            (self.name, tombstone_id),
        )
        return Tombstone(*row) if row else None

    # -- the two recall arms ----------------------------------------------------------------

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        if not terms:
            return []
        where, params = filter_clause(filt, mark="%s")
        rows = self._all(
            "SELECT m.rowid, ts_rank(m.tsv, q)::float8 AS score FROM memories m, "
            "to_tsquery('english', %s) q WHERE m.tenant = %s AND m.scope_key = %s "
            f"AND m.tsv @@ q{where} ORDER BY score DESC, m.rowid LIMIT %s",
            [_tsquery(terms), self.name, scope_key, *params, limit],
        )
        return [Candidate(r[0], float(r[1])) for r in rows]

    def vector_candidates(
        self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        where, params = filter_clause(filt, mark="%s")
        vector = np.asarray(query, dtype=np.float32)
        rows = self._all(
            "SELECT m.rowid, 1 - (m.embedding <=> %s) AS score FROM memories m "
            "WHERE m.tenant = %s AND m.scope_key = %s AND m.embed_state = 'ready' "
            f"AND vector_dims(m.embedding) = %s{where} "
            "ORDER BY m.embedding <=> %s, m.rowid LIMIT %s",
            [vector, self.name, scope_key, len(vector), *params, vector, limit],
        )
        return [Candidate(r[0], float(r[1])) for r in rows]

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        where, params = filter_clause(filt, mark="%s")
        vector = np.asarray(query, dtype=np.float32)
        terms = list(dict.fromkeys(terms))
        if terms:
            sql = _CANDIDATES.format(
                query="to_tsquery('english', %s)", matches="m.tsv @@ q.q", eligible=where,
                words=", ".join(["to_tsquery('english', %s)"] * len(terms)),
                hits=", ".join(f"(m.tsv @@ q.words[{i}])::int" for i in range(1, len(terms) + 1)),
                counts=", ".join(f"coalesce(sum(hits[{i}]), 0)" for i in range(1, len(terms) + 1)),
            )  # fmt: skip
            params = [_tsquery(terms), *(_tsquery([t]) for t in terms), *params]
        else:  # no words: the lexical arm finds nothing
            sql = _CANDIDATES.format(query="NULL::tsquery", matches="FALSE", eligible=where, words="", hits="", counts="")
        rows = self._all(sql, [len(vector), vector, *params, self.name, scope_key, limit, limit])
        arms: tuple[list[Candidate], list[Candidate]] = ([], [])
        size, counts = 0, []
        for arm, rowid, score, extra in rows:
            if arm == 2:
                size, counts = rowid, extra
            else:
                arms[arm].append(Candidate(rowid, float(score)))
        held = self._held.get()
        if held is not None:  # adjacent() and term_counts() in this block answer from what the scan saw
            held.frequencies[scope_key] = (size, dict(zip(terms, counts, strict=True)))
            known = held.neighbours.setdefault(scope_key, {})
            for arm, rowid, _, around in rows:
                if arm == 2:
                    continue
                if around is not None:
                    _learn(known, rowid, *around)
                else:  # a fact, or an episode without a session: no neighbours
                    known.setdefault(rowid, (-1, -1))
        return arms

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        before = np.full(len(rowids), -1, dtype=np.int64)
        after = np.full(len(rowids), -1, dtype=np.int64)
        wanted = [int(r) for r in rowids if r >= 0]
        if not wanted:
            return before, after
        held = self._held.get()
        known = held.neighbours.get(scope_key, {}) if held is not None else {}
        if all(r in known for r in wanted):  # this block's search saw them all
            for i, rowid in enumerate(rowids):
                if rowid >= 0:
                    before[i], after[i] = known[rowid]
            return before, after
        side = ("SELECT o.rowid FROM memories o WHERE o.tenant = m.tenant AND o.scope_key = m.scope_key "
                "AND o.source = 'EPISODE' AND o.session_id = m.session_id AND o.rowid {} m.rowid "
                "ORDER BY o.rowid {} LIMIT 1")  # fmt: skip
        rows = self._all(
            f"SELECT m.rowid, ({side.format('<', 'DESC')}), ({side.format('>', 'ASC')}) "
            "FROM memories m WHERE m.tenant = %s AND m.scope_key = %s AND m.rowid = ANY(%s) "
            "AND m.source = 'EPISODE' AND m.session_id IS NOT NULL",
            (self.name, scope_key, wanted),
        )
        found = {r[0]: r for r in rows}
        for i, rowid in enumerate(rowids):
            row = found.get(rowid)
            if row is not None:
                before[i] = -1 if row[1] is None else row[1]
                after[i] = -1 if row[2] is None else row[2]
        return before, after

    def term_counts(self, scope_key: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        held = self._held.get()
        seen = held.frequencies.get(scope_key) if held is not None else None
        if seen is not None and all(t in seen[1] for t in terms):  # this block's search counted them
            return seen[0], {t: seen[1][t] for t in terms}
        size = int(self._one("SELECT count(*) FROM memories WHERE tenant = %s AND scope_key = %s",
                             (self.name, scope_key))[0])  # fmt: skip
        counts: dict[str, int] = {}
        for term in terms:
            cached = self._term_counts.get((scope_key, term))
            if cached is not None and cached[1] * 1.1 >= size >= cached[1]:
                counts[term] = cached[0]
                continue
            count = int(self._one(
                "SELECT count(*) FROM memories WHERE tenant = %s AND scope_key = %s "
                "AND tsv @@ to_tsquery('english', %s)", (self.name, scope_key, _tsquery([term])),
            )[0])  # fmt: skip
            self._term_counts.put((scope_key, term), (count, size))
            counts[term] = count
        return size, counts

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

    # -- embeddings -----------------------------------------------------------------------

    def embedding_jobs(self, limit: int, now: str) -> list[EmbedJob]:
        rows = self._all(
            "SELECT rowid, embed_text, embed_attempts FROM memories WHERE tenant = %s AND "
            "(embed_state = 'pending' OR (embed_state = 'failed' AND embed_next_at <= %s)) "
            "ORDER BY rowid LIMIT %s",
            (self.name, now, limit),
        )
        return [EmbedJob(*r) for r in rows]

    def save_embeddings(self, rowids: Sequence[int], vectors: Vector, model: str) -> None:
        with self.transaction() as tx, tx._conn.cursor() as cursor:
            cursor.executemany(
                "UPDATE memories SET embedding = %s, embed_state = 'ready', embed_error = NULL, "
                "embed_next_at = NULL, embed_model = %s, change_seq = %s "
                "WHERE tenant = %s AND rowid = %s",
                [(np.asarray(v, dtype=np.float32), model, tx.seq, self.name, r)
                 for r, v in zip(rowids, vectors, strict=True)],
            )  # fmt: skip

    def record_embedding_failure(
        self, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]
    ) -> None:
        with self._conn() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "UPDATE memories SET embed_state = 'failed', embed_error = %s, "
                "embed_attempts = embed_attempts + 1, embed_next_at = %s "
                "WHERE tenant = %s AND rowid = %s AND embed_state != 'ready'",
                [(error, at, self.name, r) for r, at in zip(rowids, next_attempt_at, strict=True)],
            )

    def embedding_counts(self) -> dict[str, int]:
        rows = self._all("SELECT embed_state, count(*) FROM memories WHERE tenant = %s "
                         "GROUP BY embed_state", (self.name,))  # fmt: skip
        counts = {"pending": 0, "ready": 0, "failed": 0}
        counts.update({state: int(n) for state, n in rows})
        return counts

    # -- keys -----------------------------------------------------------------------------

    def create_key(self, key: KeyRecord, audit: AuditDraft) -> None:
        with self.transaction() as tx:
            inserted = tx.query(
                f"INSERT INTO api_keys (tenant, {_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, NULL) "
                "ON CONFLICT DO NOTHING RETURNING key_id",
                (self.name, key.key_id, key.role, key.grant_json, key.secret_hash, key.created_at, key.label),
            )  # fmt: skip
            if not inserted:
                raise ConflictError(f"key id {key.key_id} exists", field="keyId")
            tx.audit(audit)

    def get_key(self, key_id: str) -> KeyRecord | None:
        row = self._one(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE tenant = %s AND key_id = %s",
                        (self.name, key_id))  # fmt: skip
        return KeyRecord(*row) if row else None

    def list_keys(self) -> list[KeyRecord]:
        rows = self._all(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE tenant = %s ORDER BY created_at",
                         (self.name,))  # fmt: skip
        return [KeyRecord(*r) for r in rows]

    def revoke_key(self, key_id: str, at: str, audit: AuditDraft) -> bool:
        with self.transaction() as tx:
            revoked = tx.query(
                "UPDATE api_keys SET revoked_at = %s WHERE tenant = %s AND key_id = %s "
                "AND revoked_at IS NULL RETURNING key_id",
                (at, self.name, key_id),
            )
            if revoked:
                tx.audit(audit)
            return bool(revoked)

    # -- audit ----------------------------------------------------------------------------

    def audit_entries(self, after_seq: int, limit: int) -> list[AuditEntry]:
        rows = self._all(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE tenant = %s AND seq > %s "
            "ORDER BY seq LIMIT %s",
            (self.name, after_seq, limit),
        )
        return [AuditEntry(*r) for r in rows]

    def export_rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        with self._conn() as conn:
            yield from portable.export_rows(conn, self.name)

    def import_rows(self, rows: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, int]:
        with self._conn() as conn:
            return portable.import_rows(conn, self.name, rows)

    def close(self) -> None:
        """Connections belong to the store's pool; nothing to release per tenant."""
