"""The knowledge plane on PostgreSQL: the shared graph reads, plus record vectors in pgvector."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import psycopg

from engramdb.storage.knowledge.port import Aggregate, Query
from engramdb.storage.knowledge.reads import GraphEmbeddings, GraphReads
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.knowledge.sql import Dialect, WhereCompiler, bounded
from engramdb.storage.postgres.searches import SearchPlaces
from engramdb.storage.postgres.transaction import runner
from engramdb.storage.rows import Vector

JOINED = 4  # top-level conditions PostgreSQL's planner may order as joins (storage/knowledge/sql.py)


def _vector(vector: Vector) -> Any:
    return np.asarray(vector, dtype=np.float32)


class PostgresKnowledge(GraphReads):
    """Records and relationships of one tenant (row-level security keeps them to it)."""

    def __init__(
        self,
        tenant: str,
        run: Run,
        connect: Callable[[], AbstractContextManager[psycopg.Connection]],
        searches: SearchPlaces,
    ) -> None:
        self._dialect = Dialect("%s", tenant, links_as_sets=True, share_lock=" FOR SHARE", joined_conditions=JOINED)
        super().__init__(run, self._dialect)
        self._connect = connect
        self._tenant = tenant
        self._searches = searches  # where-queries hold few of the pool's connections at once

    def search_record_sizes(self, scope_key: str, query: Query) -> list[tuple[int, int]]:
        with self._searches.held(self._tenant, scope_key):
            return super().search_record_sizes(scope_key, query)

    def count_records(self, scope_key: str, query: Query) -> int:
        with self._searches.held(self._tenant, scope_key):
            return super().count_records(scope_key, query)

    def aggregate_records(
        self, scope_key: str, query: Query, group_by: Sequence[str], aggregates: Sequence[Aggregate]
    ) -> list[tuple[tuple[object, ...], tuple[float | None, ...]]]:
        with self._searches.held(self._tenant, scope_key):
            return super().aggregate_records(scope_key, query, group_by, aggregates)

    def record_embedding_jobs(self, limit: int, now: str) -> list[tuple[int, str, int]]:
        with self._connect() as conn:
            return GraphEmbeddings(runner(conn), self._dialect, _vector).jobs(limit, now)

    def save_record_embeddings(self, ids: Sequence[int], texts: Sequence[str], vectors: Vector, model: str) -> None:
        with self._connect() as conn:
            GraphEmbeddings(runner(conn), self._dialect, _vector).save(ids, texts, vectors, model)

    def record_record_embedding_failure(self, ids: Sequence[int], error: str, next_at: Sequence[str]) -> None:
        with self._connect() as conn:
            GraphEmbeddings(runner(conn), self._dialect, _vector).failed(ids, error, next_at)

    def record_vector_candidates(
        self, scope_key: str, vector: Vector, query: Query, name: str | None, limit: int, model: str
    ) -> list[tuple[int, float]]:
        with self._searches.held(self._tenant, scope_key):
            return self._vector_candidates(scope_key, vector, query, name, limit, model)

    def _vector_candidates(
        self, scope_key: str, vector: Vector, query: Query, name: str | None, limit: int, model: str
    ) -> list[tuple[int, float]]:
        roots = WhereCompiler(self._dialect, scope_key).roots(query)
        sql = (
            f"{roots.prefix}SELECT v.record, max(1 - (v.embedding <=> %s)) AS score FROM record_vectors v "
            "WHERE v.tenant = %s AND v.scope_key = %s AND v.embed_state = 'ready' AND v.embed_model = %s "
            "AND vector_dims(v.embedding) = %s "
            f"AND v.record IN (SELECT r.rowid {roots.sql})"
        )
        params: list[Any] = [
            *roots.prefix_params,
            _vector(vector),
            self._dialect.tenant,
            scope_key,
            model,
            len(vector),
            *roots.params,
        ]
        if name is not None:
            sql += " AND v.name = %s"
            params.append(name)
        rows = self._run(sql + " GROUP BY v.record ORDER BY score DESC, v.record LIMIT %s", bounded([*params, limit]))
        return [(int(record), float(score)) for record, score in rows]
