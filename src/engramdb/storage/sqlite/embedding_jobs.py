"""A tenant's embedding work in its SQLite file: rows whose vector is due, saved vectors, failures."""

from __future__ import annotations

from collections.abc import Sequence

from engramdb.storage.port import EmbedJob, Vector
from engramdb.storage.scope_copy import encode
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.transaction import SQLiteTransaction


class SQLiteEmbeddingJobs:
    """The embedding worker's reads and writes (part of ``SQLiteTenantStore``)."""

    _db: Connections

    def embedding_jobs(self, limit: int, now: str) -> list[EmbedJob]:
        # The due rows come from the due index (its condition named): asked directly, SQLite read
        # every row in rowid order to find the few pending ones (10 ms at 10,000 rows).
        rows = self._db.fetchall(
            "SELECT rowid, embed_text, embed_attempts FROM memories WHERE rowid IN (SELECT rowid FROM memories "
            "WHERE embed_state != 'ready' AND (embed_state = 'pending' OR (embed_state = 'failed' AND "
            "embed_next_at <= ?))) ORDER BY rowid LIMIT ?",
            (now, limit),
        )
        return [EmbedJob(r[0], r[1], r[2]) for r in rows]

    def save_embeddings(
        self, rowids: Sequence[int], vectors: Vector, model: str, *, texts: Sequence[str] | None = None
    ) -> None:
        update = (
            "UPDATE memories SET embedding = ?, embed_state = 'ready', embed_error = NULL, "
            "embed_next_at = NULL, embed_model = ?, change_seq = ? WHERE rowid = ?"
        )
        with self._db.write() as conn:
            seq = SQLiteTransaction(conn)._change_seq()
            if texts is None:
                conn.executemany(update, [(encode(v), model, seq, r) for r, v in zip(rowids, vectors, strict=True)])
                return
            conn.executemany(  # a rowid a new row took after a delete names another text (port.py)
                update + " AND embed_text = ?",
                [(encode(v), model, seq, r, t) for r, v, t in zip(rowids, vectors, texts, strict=True)],
            )

    def record_embedding_failure(self, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]) -> None:
        with self._db.write() as conn:
            conn.executemany(
                "UPDATE memories SET embed_state = 'failed', embed_error = ?, embed_attempts = embed_attempts + 1, "
                "embed_next_at = ? WHERE rowid = ? AND embed_state != 'ready'",
                [(error, at, r) for r, at in zip(rowids, next_attempt_at, strict=True)],
            )

    def embedding_backlog(self) -> int:
        return int(self._db.fetchone("SELECT count(*) FROM memories WHERE embed_state != 'ready'")[0])

    def embedding_counts(self) -> dict[str, int]:
        rows = self._db.fetchall("SELECT embed_state, count(*) FROM memories GROUP BY embed_state")
        counts = {"pending": 0, "ready": 0, "failed": 0}
        counts.update({state: n for state, n in rows})
        return counts
