"""The recall arms of one PostgreSQL tenant: full-text and exact-vector candidates, neighbours.

The vector arm is exact: the scope filter runs first on a B-tree and the rows left are sorted by
cosine distance; there is deliberately no approximate index, because pgvector's HNSW, once
present, is used for scope-filtered queries too and returns a fraction of the true neighbours.
Inside a ``reading()`` block one scan serves both arms, and what it saw (session neighbours,
word counts) answers the block's later ``adjacent()`` and ``term_counts()`` calls.

That scan costs in proportion to the scope (0.5 s a recall at 50,000 memories). A scope the scan
finds holding ``copy_min_rows`` memories or more is answered from then on by an in-memory copy,
SQLite's engine (storage/scope_copy.py: int8 vectors re-ranked at full precision, BM25 over an
inverted index), refreshed from the tenant's change counter before every read like SQLite's.
Above that size the lexical arm ranks by BM25 over the scope instead of ``ts_rank``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import psycopg

from engramdb import traces
from engramdb.storage.columns import filter_clause
from engramdb.storage.common import LRU
from engramdb.storage.port import Candidate, CandidateFilter, Vector
from engramdb.storage.postgres.tsquery import tsquery
from engramdb.storage.scope_cache import ScopeCache, erasure_key, read_copy
from engramdb.storage.scope_cache import Source as CopySource
from engramdb.storage.scope_copy import CopyRow, ScopeCopy

Rows = Callable[[str, Sequence[Any]], list[Any]]
T = TypeVar("T")
_COPY_ROWS = (
    "SELECT rowid, source, status, session_id, CASE WHEN embed_state = 'ready' "
    "AND embed_model IS NOT DISTINCT FROM coalesce(%s, embed_model) THEN vector_send(embedding) END, "
    "active_from, retired_at, valid_from, valid_until, invalid_at, lexical_body FROM memories "
    "WHERE tenant = %s AND rowid = ANY(%s) ORDER BY rowid"
)


@dataclass
class ReadingBlock:
    """The connection a ``reading()`` block shares, once its first read took it, and what its
    searches learned: session neighbours (scope key -> rowid -> (before, after)) and the scope's
    size and word frequencies (scope key -> (size, word -> memories containing it))."""

    stack: ExitStack
    conn: psycopg.Connection | None = None
    neighbours: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    frequencies: dict[str, tuple[int, dict[str, int]]] = field(default_factory=dict)
    seqs: dict[str, int] = field(default_factory=dict)  # the change counter as a copy's first read saw it
    erasures: dict[str, object] = field(default_factory=dict)  # and the erasure counter


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
           CASE WHEN m.embed_state = 'ready' AND vector_dims(m.embedding) = %s
                     AND m.embed_model IS NOT DISTINCT FROM coalesce(%s, m.embed_model) AND f.ok
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


def _candidates_statement(terms: list[str], where: str, params: list[Any]) -> tuple[str, list[Any]]:
    """Return the ``_CANDIDATES`` statement for these query words and filter conjuncts, and the
    parameters of its text queries followed by the filter's ``params``."""
    if not terms:  # no words: the lexical arm finds nothing
        sql = _CANDIDATES.format(query="NULL::tsquery", matches="FALSE", eligible=where, words="", hits="", counts="")
        return sql, params
    numbers = range(1, len(terms) + 1)
    sql = _CANDIDATES.format(
        query="to_tsquery('english', %s)",
        matches="m.tsv @@ q.q",
        eligible=where,
        words=", ".join(["to_tsquery('english', %s)"] * len(terms)),
        hits=", ".join(f"(m.tsv @@ q.words[{i}])::int" for i in numbers),
        counts=", ".join(f"coalesce(sum(hits[{i}]), 0)" for i in numbers),
    )
    return sql, [tsquery(terms), *(tsquery([t]) for t in terms), *params]


def _floats(sent: bytes) -> np.ndarray:
    """A vector from ``vector_send``'s binary form (dimensions, an unused word, big-endian
    float32s) as little-endian float32: text form costs a float parse per dimension in Python."""
    return np.frombuffer(sent, dtype=">f4", offset=4).astype("<f4")


def _learn_neighbours(known: dict[int, tuple[int, int]], rows: Sequence[Any]) -> None:
    """Record each found row's neighbours, and what they imply for the neighbours themselves."""
    for arm, rowid, _, around in rows:
        if arm == 2:
            continue
        if around is None:  # a fact, or an episode without a session: no neighbours
            known.setdefault(rowid, (-1, -1))
            continue
        before_2, before, after, after_2 = around
        known[rowid] = (before, after)
        if before >= 0:
            known[before] = (before_2, rowid)
        if after >= 0:
            known[after] = (rowid, after_2)


class PostgresSearch:
    """The recall arms of one tenant, reading through the tenant store's connection."""

    def __init__(
        self,
        tenant: str,
        rows: Rows,
        held: ContextVar[ReadingBlock | None],
        copies: ScopeCache,
        copy_min_rows: int,
    ) -> None:
        self._tenant = tenant
        self._rows = rows
        self._held = held
        self._term_counts: LRU[tuple[str, str], tuple[int, int]] = LRU(50_000)
        self._copies = copies
        self._copy_min_rows = copy_min_rows
        self._large: set[str] = set()  # scopes answered from the in-memory copy
        self._vector_model: str | None = None  # whose vectors the copies hold (the running embedder's)

    def uses_copy(self, scope_key: str) -> bool:
        """True when the scope is large enough to be answered from the in-memory copy."""
        return scope_key in self._large

    def warm(self, scope_key: str, vector_model: str | None = None) -> int:
        """Answer the scope from its in-memory copy from now on, loaded now (with ``vector_model``'s
        vectors: a copy of another model's is rebuilt by the first recall); return its rows."""
        self._use_model(vector_model)
        self._large.add(scope_key)
        return self._read_copy(scope_key, len)

    def _read_copy(self, scope_key: str, read: Callable[[ScopeCopy], T]) -> T:
        source = self._source(scope_key, self._held.get())
        # A later freshen asks the counters anew (this source keeps what this block read).
        return read_copy(
            self._copies, f"{self._tenant}:{scope_key}", source, read, renew=lambda: self._source(scope_key, None)
        )

    def _source(self, scope_key: str, held: Any) -> CopySource:
        """How the copy reads the scope; ``held``: the reading block's counters, asked once."""

        def rows(ids: Sequence[int]) -> list[CopyRow]:
            return [
                CopyRow(
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    None if r[4] is None else _floats(r[4]).tobytes(),
                    r[5],
                    r[6],
                    r[7],
                    r[8],
                    r[9],
                    body=r[10],
                )
                for r in self._rows(_COPY_ROWS, (self._vector_model, self._tenant, list(ids)))
            ]

        asked: dict[str, object] = {}

        def counters() -> tuple[int, object]:
            # A recall reads a scope four or five times; each one's round trip to ask the
            # counters cost 2-4 ms on a busy machine, so a reading() block asks once per scope.
            if held is not None and scope_key in held.seqs:
                return held.seqs[scope_key], held.erasures.get(scope_key)
            if not asked:
                asked.update(
                    self._rows(
                        "SELECT key, value FROM meta WHERE tenant = %s AND key IN ('change_seq', %s)",
                        (self._tenant, erasure_key(scope_key)),
                    )
                )
            seq, erasures = int(str(asked["change_seq"])), asked.get(erasure_key(scope_key))
            if held is not None:
                held.seqs[scope_key], held.erasures[scope_key] = seq, erasures
            return seq, erasures

        def current_seq() -> int:
            return counters()[0]

        return CopySource(
            current_seq=current_seq,
            changed_ids=lambda seq: [
                r[0]
                for r in self._rows(
                    "SELECT rowid FROM memories WHERE tenant = %s AND scope_key = %s AND change_seq > %s",
                    (self._tenant, scope_key, seq),
                )
            ],
            rows=rows,
            generation=lambda: (counters()[1], self._vector_model),
        )

    def _vectors(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Read rows' vectors at full precision (the copy re-ranks its short list with them)."""
        rows = self._rows(
            "SELECT rowid, vector_send(embedding) FROM memories WHERE tenant = %s AND rowid = ANY(%s) "
            "AND embed_state = 'ready'",
            (self._tenant, rowids.tolist()),
        )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        vectors = [(r[0], _floats(r[1])) for r in rows]
        width = max(len(v) for _, v in vectors)
        vectors = [(r, v) for r, v in vectors if len(v) == width]
        return np.array([r for r, _ in vectors], dtype=np.int64), np.stack([v for _, v in vectors])

    def _use_model(self, model: str | None) -> None:
        if model is not None:
            self._vector_model = model  # the copies hold this model's vectors only

    def forget_cached(self) -> None:
        """Drop the cached term counts (their keys are words of queries, and rows went)."""
        self._term_counts.clear()

    def _row(self, sql: str, params: Sequence[Any]) -> Any:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        self._use_model(filt.vector_model)  # the copy holds one model's vectors: read the arms' one
        if scope_key in self._large:
            return self._read_copy(scope_key, lambda copy: copy.text_search(terms, filt, limit))
        if not terms:
            return []
        where, params = filter_clause(filt, mark="%s")
        rows = self._rows(
            "SELECT m.rowid, ts_rank(m.tsv, q)::float8 AS score FROM memories m, "
            "to_tsquery('english', %s) q WHERE m.tenant = %s AND m.scope_key = %s "
            f"AND m.tsv @@ q{where} ORDER BY score DESC, m.rowid LIMIT %s",
            [tsquery(terms), self._tenant, scope_key, *params, limit],
        )
        return [Candidate(r[0], float(r[1])) for r in rows]

    def vector_candidates(self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        self._use_model(filt.vector_model)
        if scope_key in self._large:
            return self._read_copy(scope_key, lambda copy: copy.search(query, filt, limit, self._vectors))
        where, params = filter_clause(filt, mark="%s")
        vector = np.asarray(query, dtype=np.float32)
        rows = self._rows(
            "SELECT m.rowid, 1 - (m.embedding <=> %s) AS score FROM memories m "
            "WHERE m.tenant = %s AND m.scope_key = %s AND m.embed_state = 'ready' "
            f"AND vector_dims(m.embedding) = %s AND m.embed_model IS NOT DISTINCT FROM coalesce(%s, m.embed_model)"
            f"{where} ORDER BY m.embedding <=> %s, m.rowid LIMIT %s",
            [vector, self._tenant, scope_key, len(vector), filt.vector_model, *params, vector, limit],
        )
        return [Candidate(r[0], float(r[1])) for r in rows]

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        self._use_model(filt.vector_model)
        if scope_key in self._large:
            return self._read_copy(
                scope_key,
                lambda copy: (
                    traces.traced_arm("dense", lambda: copy.search(query, filt, limit, self._vectors)),
                    traces.traced_arm("lexical", lambda: copy.text_search(terms, filt, limit)),
                ),
            )
        where, params = filter_clause(filt, mark="%s")
        vector = np.asarray(query, dtype=np.float32)
        terms = list(dict.fromkeys(terms))
        sql, params = _candidates_statement(terms, where, params)
        rows = self._rows(sql, [len(vector), filt.vector_model, vector, *params, self._tenant, scope_key, limit, limit])
        arms: tuple[list[Candidate], list[Candidate]] = ([], [])
        size, counts = 0, []
        for arm, rowid, score, extra in rows:
            if arm == 2:
                size, counts = rowid, extra
            else:
                arms[arm].append(Candidate(rowid, float(score)))
        if size >= self._copy_min_rows:  # large: the next reads of this scope go to the copy
            self._large.add(scope_key)
        held = self._held.get()
        if held is not None:  # adjacent() and term_counts() in this block answer from what the scan saw
            held.frequencies[scope_key] = (size, dict(zip(terms, counts, strict=True)))
            _learn_neighbours(held.neighbours.setdefault(scope_key, {}), rows)
        return arms

    def rank(
        self, scope_key: str, rowids: np.ndarray, query: Vector, words: Sequence[str], limit: int, model: str
    ) -> list[Candidate]:
        """A structured fact search's ranking: from the scope's copy whatever its size (every row
        it ranks is scored, which the copy's codes and postings do in one pass)."""
        return self.read_copy(scope_key, model, lambda copy: copy.rank(query, words, rowids, limit, self._vectors))

    def read_copy(self, scope_key: str, model: str | None, read: Callable[[ScopeCopy], T]) -> T:
        """Read the scope's copy of ``model``'s vectors (None: the model its copies hold), brought up
        to date, whatever its size."""
        self._use_model(model)
        return self._read_copy(scope_key, read)

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
        if scope_key in self._large:
            return self._read_copy(scope_key, lambda copy: copy.adjacent(rowids))
        side = (
            "SELECT o.rowid FROM memories o WHERE o.tenant = m.tenant AND o.scope_key = m.scope_key "
            "AND o.source = 'EPISODE' AND o.session_id = m.session_id AND o.rowid {} m.rowid "
            "ORDER BY o.rowid {} LIMIT 1"
        )
        rows = self._rows(
            f"SELECT m.rowid, ({side.format('<', 'DESC')}), ({side.format('>', 'ASC')}) "
            "FROM memories m WHERE m.tenant = %s AND m.scope_key = %s AND m.rowid = ANY(%s) "
            "AND m.source = 'EPISODE' AND m.session_id IS NOT NULL",
            (self._tenant, scope_key, wanted),
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
        if scope_key in self._large:
            return self._read_copy(scope_key, lambda copy: (len(copy), {t: copy.document_frequency(t) for t in terms}))
        size = int(
            self._row("SELECT count(*) FROM memories WHERE tenant = %s AND scope_key = %s", (self._tenant, scope_key))[
                0
            ]
        )
        counts: dict[str, int] = {}
        for term in terms:
            cached = self._term_counts.get((scope_key, term))
            if cached is not None and cached[1] * 1.1 >= size >= cached[1]:
                counts[term] = cached[0]
                continue
            count = int(
                self._row(
                    "SELECT count(*) FROM memories WHERE tenant = %s AND scope_key = %s "
                    "AND tsv @@ to_tsquery('english', %s)",
                    (self._tenant, scope_key, tsquery([term])),
                )[0]
            )
            self._term_counts.put((scope_key, term), (count, size))
            counts[term] = count
        return size, counts
