"""The knowledge plane on SQLite: the shared graph reads, plus record vectors as float32 blobs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engramdb.storage.knowledge.port import Query
from engramdb.storage.knowledge.reads import GraphEmbeddings, GraphReads
from engramdb.storage.knowledge.sql import WhereCompiler, bounded
from engramdb.storage.rows import Vector
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.transaction import SQLITE, runner


def _blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SQLiteKnowledge(GraphReads):
    """Records and relationships of one tenant file."""

    def __init__(self, db: Connections) -> None:
        super().__init__(db.fetchall, SQLITE)
        self._graph_db = db

    def record_embedding_jobs(self, limit: int, now: str) -> list[tuple[int, str, int]]:
        return GraphEmbeddings(self._graph_db.fetchall, SQLITE, _blob).jobs(limit, now)

    def save_record_embeddings(self, ids: Sequence[int], texts: Sequence[str], vectors: Vector, model: str) -> None:
        with self._graph_db.write() as conn:
            GraphEmbeddings(runner(conn), SQLITE, _blob).save(ids, texts, vectors, model)

    def record_record_embedding_failure(self, ids: Sequence[int], error: str, next_at: Sequence[str]) -> None:
        with self._graph_db.write() as conn:
            GraphEmbeddings(runner(conn), SQLITE, _blob).failed(ids, error, next_at)

    def record_vector_candidates(
        self, scope_key: str, vector: Vector, query: Query, name: str | None, limit: int, model: str
    ) -> list[tuple[int, float]]:
        roots = WhereCompiler(SQLITE, scope_key).roots(query)
        sql = (
            f"{roots.prefix}SELECT v.record, v.embedding FROM record_vectors v WHERE v.scope_key = ? "
            f"AND v.embed_state = 'ready' AND v.embed_model = ? AND v.record IN (SELECT r.rowid {roots.sql})"
        )
        params = [*roots.prefix_params, scope_key, model, *roots.params]
        if name is not None:
            sql += " AND v.name = ?"
            params.append(name)
        width = len(vector) * 4
        rows = [(r, blob) for r, blob in self._graph_db.fetchall(sql, bounded(params)) if len(blob) == width]
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        best: dict[int, float] = {}
        for (record, _), score in zip(rows, scores.tolist(), strict=True):
            best[record] = max(score, best.get(record, -2.0))
        return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
