"""One tenant in one SQLite file: memories, FTS5, vectors, keys and the audit chain."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from engramdb import clock
from engramdb.errors import ConflictError
from engramdb.storage.port import (
    GENESIS_HASH,
    AuditDraft,
    AuditEntry,
    Candidate,
    CandidateFilter,
    Capabilities,
    EmbedJob,
    KeyRecord,
    MemoryRecord,
    NewMemory,
    Source,
    Vector,
    WriteOutcome,
    chain_hash,
)
from engramdb.storage.sqlite.connection import Connections, translate
from engramdb.storage.sqlite.vectors import VectorCache, encode, rows_from

_MEMORY_COLUMNS = (
    "rowid, source, memory_id, scope_key, text, trust_class, origin, status, confidence, "
    "observed_at, recorded_at, event_json, embed_state, embed_error, embed_attempts, session_id, "
    "subject_key, kind, valid_from, valid_until, retired_at, supersedes_id, superseded_by_id, "
    "status_reason"
)
_AUDIT_COLUMNS = (
    "seq, at, action, actor_key_id, actor_role, target_kind, target_id, scope_key, "
    "before_digest, after_digest, reason, prev_hash, hash"
)


def scope_token(scope_key: str) -> str:
    """Return the FTS token of a scope: digits only, so no stemmer can alter it."""
    return str(int(scope_key[:24], 16))


def _placeholders(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class SQLiteTenantStore:
    """A tenant's store; thread-safe; several processes may open the same file."""

    capabilities = Capabilities(native_vector_index=False, lexical_ranking="bm25 (FTS5)")

    def __init__(self, path: Path, *, synchronous: str = "NORMAL", cache: VectorCache) -> None:
        self.path = path
        self._db = Connections(path, synchronous=synchronous)
        self._vectors = cache
        self._migrate()

    # -- schema ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        exists = self._db.read().execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if exists:
            return
        script = resources.files("engramdb.storage.sqlite").joinpath("schema.sql").read_text()
        with self._db.write() as conn:
            # Another process may have created it between our check and our lock.
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
                for statement in _statements(script):
                    conn.execute(statement)

    # -- writes ---------------------------------------------------------------------------

    def insert_memories(
        self, rows: Sequence[NewMemory], audits: Sequence[AuditDraft]
    ) -> list[WriteOutcome]:
        outcomes: list[WriteOutcome] = []
        with self._db.write() as conn:
            seq = _bump(conn)
            for row, audit in zip(rows, audits, strict=True):
                rowid = self._insert_row(conn, row, seq)
                if rowid is not None:
                    _append_audit(conn, audit)
                    conn.execute(
                        "INSERT INTO memories_fts (rowid, scope, body) VALUES (?, ?, ?)",
                        (rowid, scope_token(row.scope.scope_key), row.text),
                    )
                record = self._get(conn, row.scope.scope_key, row.source, row.memory_id)
                assert record is not None  # inserted or already present, in this transaction
                outcomes.append(WriteOutcome(created=rowid is not None, record=record))
        return outcomes

    @staticmethod
    def _insert_row(conn: sqlite3.Connection, row: NewMemory, seq: int) -> int | None:
        scope = row.scope
        cursor = conn.execute(
            """INSERT INTO memories (source, memory_id, scope_key, agent_id, profile_id,
                   privacy_scope, participant_scope_hash, sandbox_eligible, session_id,
                   subject_key, kind, text, embed_text, trust_class, origin, status, confidence,
                   observed_at, valid_from, valid_until, recorded_at, supersedes_id, event_json,
                   change_seq)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT (scope_key, source, memory_id) DO NOTHING""",
            (
                row.source, row.memory_id, scope.scope_key, scope.agent_id, scope.profile_id,
                scope.privacy_scope, scope.participant_scope_hash, int(scope.sandbox_eligible),
                row.session_id, row.subject_key, row.kind, row.text, row.embed_text,
                row.trust_class, row.origin, row.status, row.confidence, row.observed_at,
                row.valid_from, row.valid_until, row.recorded_at, row.supersedes_id,
                row.event_json, seq,
            ),
        )  # fmt: skip
        return cursor.lastrowid if cursor.rowcount == 1 else None

    # -- reads ----------------------------------------------------------------------------

    def get_memory(self, scope_key: str, source: Source, memory_id: str) -> MemoryRecord | None:
        return self._get(self._db.read(), scope_key, source, memory_id)

    @staticmethod
    def _get(
        conn: sqlite3.Connection, scope_key: str, source: str, memory_id: str
    ) -> MemoryRecord | None:
        row = _fetchone(
            conn,
            f"SELECT {_MEMORY_COLUMNS} FROM memories "
            "WHERE scope_key = ? AND source = ? AND memory_id = ?",
            (scope_key, source, memory_id),
        )
        return _memory(row) if row else None

    def list_facts(
        self,
        scope_key: str,
        *,
        subject_key: str | None,
        kind: str | None,
        statuses: Sequence[str],
        limit: int,
    ) -> list[MemoryRecord]:
        sql = (
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE scope_key = ? AND source = 'MEMORY_FACT'"
            f" AND status IN ({_placeholders(statuses)})"
        )
        params: list[Any] = [scope_key, *statuses]
        if subject_key is not None:
            sql += " AND subject_key = ?"
            params.append(subject_key)
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        sql += " ORDER BY recorded_at DESC, rowid DESC LIMIT ?"
        params.append(limit)
        return [_memory(r) for r in _fetchall(self._db.read(), sql, params)]

    def records(self, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        if not rowids:
            return {}
        rows = _fetchall(
            self._db.read(),
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE rowid IN ({_placeholders(rowids)})",
            list(rowids),
        )
        return {r[0]: _memory(r) for r in rows}

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        if not terms:
            return []
        phrases = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        match = f'scope : "{scope_token(scope_key)}" AND body : ({phrases})'
        sql = (
            "SELECT f.rowid, -bm25(memories_fts, 0.0, 1.0) AS score "
            "FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ? AND m.scope_key = ? "
            f"AND m.status IN ({_placeholders(filt.statuses)}) "
            f"AND m.source IN ({_placeholders(filt.sources)})"
        )
        params: list[Any] = [match, scope_key, *filt.statuses, *filt.sources]
        if filt.exclude_session_id is not None:
            sql += " AND (m.session_id IS NULL OR m.session_id != ?)"
            params.append(filt.exclude_session_id)
        sql += " ORDER BY score DESC, f.rowid LIMIT ?"
        params.append(limit)
        return [Candidate(r[0], r[1]) for r in _fetchall(self._db.read(), sql, params)]

    def vector_candidates(
        self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        vectors = self._vectors.scope(f"{self.path}:{scope_key}")
        with self._vectors.lock_for(f"{self.path}:{scope_key}"):
            self._refresh(vectors, scope_key)
            return vectors.search(query, filt, limit)

    def _refresh(self, vectors: Any, scope_key: str) -> None:
        conn = self._db.read()
        current = int(_fetchone(conn, "SELECT value FROM meta WHERE key='change_seq'", ())[0])
        if current <= vectors.seq:
            return
        rows = _fetchall(
            conn,
            "SELECT rowid, source, status, session_id, "
            "CASE WHEN embed_state = 'ready' THEN embedding END "
            "FROM memories WHERE scope_key = ? AND change_seq > ? ORDER BY rowid",
            (scope_key, vectors.seq),
        )
        vectors.apply(rows_from(rows))
        vectors.seq = current

    # -- embeddings -----------------------------------------------------------------------

    def embedding_jobs(self, limit: int, now: str) -> list[EmbedJob]:
        rows = _fetchall(
            self._db.read(),
            "SELECT rowid, embed_text, embed_attempts FROM memories "
            "WHERE embed_state = 'pending' OR (embed_state = 'failed' AND embed_next_at <= ?) "
            "ORDER BY rowid LIMIT ?",
            (now, limit),
        )
        return [EmbedJob(r[0], r[1], r[2]) for r in rows]

    def save_embeddings(self, rowids: Sequence[int], vectors: Vector, model: str) -> None:
        with self._db.write() as conn:
            seq = _bump(conn)
            conn.executemany(
                "UPDATE memories SET embedding = ?, embed_state = 'ready', embed_error = NULL, "
                "embed_next_at = NULL, embed_model = ?, change_seq = ? WHERE rowid = ?",
                [(encode(v), model, seq, r) for r, v in zip(rowids, vectors, strict=True)],
            )

    def record_embedding_failure(
        self, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]
    ) -> None:
        with self._db.write() as conn:
            conn.executemany(
                "UPDATE memories SET embed_state = 'failed', embed_error = ?, "
                "embed_attempts = embed_attempts + 1, embed_next_at = ? "
                "WHERE rowid = ? AND embed_state != 'ready'",
                [(error, at, r) for r, at in zip(rowids, next_attempt_at, strict=True)],
            )

    def embedding_counts(self) -> dict[str, int]:
        rows = _fetchall(
            self._db.read(), "SELECT embed_state, count(*) FROM memories GROUP BY embed_state", ()
        )
        counts = {"pending": 0, "ready": 0, "failed": 0}
        counts.update({state: n for state, n in rows})
        return counts

    # -- keys -----------------------------------------------------------------------------

    def create_key(self, key: KeyRecord, audit: AuditDraft) -> None:
        with self._db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO api_keys (key_id, role, grant_json, secret_hash, label, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (key.key_id, key.role, key.grant_json, key.secret_hash, key.label,
                     key.created_at),
                )  # fmt: skip
            except sqlite3.IntegrityError as error:
                raise ConflictError(f"key id {key.key_id} exists", field="keyId") from error
            _append_audit(conn, audit)

    def get_key(self, key_id: str) -> KeyRecord | None:
        row = _fetchone(
            self._db.read(),
            "SELECT key_id, role, grant_json, secret_hash, created_at, label, revoked_at "
            "FROM api_keys WHERE key_id = ?",
            (key_id,),
        )
        return KeyRecord(*row) if row else None

    def list_keys(self) -> list[KeyRecord]:
        rows = _fetchall(
            self._db.read(),
            "SELECT key_id, role, grant_json, secret_hash, created_at, label, revoked_at "
            "FROM api_keys ORDER BY created_at",
            (),
        )
        return [KeyRecord(*r) for r in rows]

    def revoke_key(self, key_id: str, at: str, audit: AuditDraft) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                (at, key_id),
            )
            if cursor.rowcount != 1:
                return False
            _append_audit(conn, audit)
            return True

    # -- audit ----------------------------------------------------------------------------

    def audit_entries(self, after_seq: int, limit: int) -> list[AuditEntry]:
        rows = _fetchall(
            self._db.read(),
            f"SELECT {_AUDIT_COLUMNS} FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?",
            (after_seq, limit),
        )
        return [AuditEntry(*r) for r in rows]

    def close(self) -> None:
        self._db.close()


# -- helpers --------------------------------------------------------------------------------


def _statements(script: str) -> list[str]:
    """Split a schema script into statements, keeping trigger bodies whole."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements


def _bump(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'change_seq' "
        "RETURNING value"
    ).fetchone()
    return int(row[0])


def _append_audit(conn: sqlite3.Connection, draft: AuditDraft) -> None:
    last = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
    seq, prev_hash = (last[0] + 1, last[1]) if last else (1, GENESIS_HASH)
    at = clock.now_text()
    digest = chain_hash(draft, seq=seq, at=at, prev_hash=prev_hash)
    conn.execute(
        f"INSERT INTO audit_log ({_AUDIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (seq, at, draft.action, draft.actor_key_id, draft.actor_role, draft.target_kind,
         draft.target_id, draft.scope_key, draft.before_digest, draft.after_digest, draft.reason,
         prev_hash, digest),
    )  # fmt: skip


def _memory(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(*row)


def _fetchone(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> Any:
    try:
        return conn.execute(sql, params).fetchone()
    except sqlite3.Error as error:
        raise translate(error) from error


def _fetchall(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as error:
        raise translate(error) from error

