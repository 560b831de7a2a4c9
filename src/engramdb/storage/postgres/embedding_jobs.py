"""A tenant's embedding work on PostgreSQL: rows whose vector is due, saved vectors, failures."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engramdb.storage.port import EmbedJob, Vector
from engramdb.storage.postgres.access import TenantAccess


class PostgresEmbeddingJobs:
    """The embedding worker's reads and writes (part of ``PostgresTenantStore``)."""

    def embedding_jobs(self: TenantAccess, limit: int, now: str) -> list[EmbedJob]:
        rows = self._all(
            "SELECT rowid, embed_text, embed_attempts FROM memories WHERE tenant = %s AND "
            "embed_state != 'ready' AND (embed_state = 'pending' OR (embed_state = 'failed' AND embed_next_at <= %s)) "
            "ORDER BY rowid LIMIT %s",
            (self.name, now, limit),
        )
        return [EmbedJob(*r) for r in rows]

    def save_embeddings(
        self: TenantAccess, rowids: Sequence[int], vectors: Vector, model: str, *, texts: Sequence[str] | None = None
    ) -> None:
        update = (
            "UPDATE memories SET embedding = %s, embed_state = 'ready', embed_error = NULL, "
            "embed_next_at = NULL, embed_model = %s, change_seq = %s WHERE tenant = %s AND rowid = %s"
        )
        with self.transaction() as tx, tx._conn.cursor() as cursor:
            if texts is None:
                rows = [
                    (np.asarray(v, dtype=np.float32), model, tx.seq, self.name, r)
                    for r, v in zip(rowids, vectors, strict=True)
                ]
                cursor.executemany(update, rows)
                return
            checked = [
                (np.asarray(v, dtype=np.float32), model, tx.seq, self.name, r, t)
                for r, v, t in zip(rowids, vectors, texts, strict=True)
            ]
            cursor.executemany(update + " AND embed_text = %s", checked)  # a text changed meanwhile: not its vector

    def record_embedding_failure(
        self: TenantAccess, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]
    ) -> None:
        with self._conn() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "UPDATE memories SET embed_state = 'failed', embed_error = %s, "
                "embed_attempts = embed_attempts + 1, embed_next_at = %s "
                "WHERE tenant = %s AND rowid = %s AND embed_state != 'ready'",
                [(error, at, self.name, r) for r, at in zip(rowids, next_attempt_at, strict=True)],
            )

    def embedding_backlog(self: TenantAccess) -> int:
        row = self._one("SELECT count(*) FROM memories WHERE tenant = %s AND embed_state != 'ready'", (self.name,))
        return int(row[0]) if row else 0

    def embedding_counts(self: TenantAccess) -> dict[str, int]:
        rows = self._all(
            "SELECT embed_state, count(*) FROM memories WHERE tenant = %s GROUP BY embed_state", (self.name,)
        )
        counts = {"pending": 0, "ready": 0, "failed": 0}
        counts.update({state: int(n) for state, n in rows})
        return counts
