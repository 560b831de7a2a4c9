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

_SLICE = 2_000  # record vectors scored at once


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
        width, query_vector = len(vector) * 4, np.asarray(vector, dtype=np.float32)
        records, scores = [], []
        # A slice of rows at a time: the whole scope's vectors at once took 121 MB of memory a search
        # at 50,000 record texts (session 49), however few results were asked for.
        with self._graph_db.reading() as conn:
            cursor = conn.execute(sql, bounded(params))
            while read := cursor.fetchmany(_SLICE):
                rows = [(r, blob) for r, blob in read if len(blob) == width]  # another width: another model's
                if not rows:
                    continue
                matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
                records.append(np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows)))
                scores.append(matrix @ query_vector)
        return _best_per_record(
            np.concatenate(records or [np.empty(0, np.int64)]), np.concatenate(scores or [np.empty(0)]), limit
        )


def _best_per_record(records: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Each record's best score (a record has a vector per text), the first ``limit`` by score, then rowid."""
    order = np.lexsort((records, -scores))
    _, first = np.unique(records[order], return_index=True)  # where each record's best comes in that order
    return [(int(records[i]), float(scores[i])) for i in order[np.sort(first)][:limit]]
