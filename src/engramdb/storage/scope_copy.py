"""Both recall arms of one scope over an in-memory copy of it: vectors and BM25.

Reading every blob of a large scope from SQLite on each query would dominate recall latency,
so each scope's ready vectors live in memory as int8 codes (storage/vector_index.py: exact by
re-ranking a short list at full precision, read back from the database; lists above a size),
and its texts in an inverted index (lexical/index.py), beside the columns the filters read. The
copy is refreshed incrementally: every write stamps its rows with the tenant's ``change_seq``,
and a query first pulls the rows of its scope stamped after the copy's own sequence (another
process may have written them), so a memory is found lexically the moment its write returns.
Ineligible rows are masked out before the top-k is selected, so a filter can never cost a true
match its place.
storage/scope_cache.py holds the copies, up to a memory limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engramdb import clock
from engramdb.lexical.index import LexicalIndex, Vocabulary, stem_weights
from engramdb.storage.copy_memo import Memo
from engramdb.storage.fact_search.field_columns import FieldColumns
from engramdb.storage.port import Candidate, CandidateFilter, Vector
from engramdb.storage.vector_index import AnnSettings, ExactVectors, VectorIndex

_SOURCES = {"EPISODE": 0, "MEMORY_FACT": 1}


@dataclass(frozen=True)
class CopyRow:
    """A row as the cache needs it."""

    rowid: int
    source: str
    status: str
    session_id: str | None
    embedding: bytes | None  # None while the vector is pending or failed
    active_from: str | None = None
    retired_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    invalid_at: str | None = None
    body: str = ""  # what the lexical arm indexes (lexical/body.py)


_TIMES = ("active_from", "retired_at", "valid_from", "valid_until", "invalid_at")


def _instant(text: str) -> np.datetime64:
    """A filter's time at microsecond precision (float seconds lose microseconds past ~2255)."""
    return np.datetime64(clock.normalize(text)[:-1], "us")


class ScopeCopy:
    """One scope's ready vectors and inverted index, with what the filters need beside them."""

    def __init__(self, vocabulary: Vocabulary | None = None, ann: AnnSettings | None = None) -> None:
        self.seq = 0
        self.generation: object = None  # what the copy was loaded under (source.generation)
        self._ann = ann or AnnSettings()
        self._size = 0
        self._rowids = np.zeros(0, dtype=np.int64)  # ascending: rowids only grow
        self._vectors: VectorIndex | None = None  # once the first vector fixes the dimension
        self._ready = np.zeros(0, dtype=bool)
        self._source = np.zeros(0, dtype=np.int8)
        self._status = np.zeros(0, dtype=np.int16)
        self._session = np.zeros(0, dtype=np.int32)
        self._times = {name: np.zeros(0, dtype="datetime64[us]") for name in _TIMES}
        self._status_codes: dict[str | None, int] = {}
        self._session_codes: dict[str | None, int] = {None: 0}
        self._lexical = LexicalIndex(vocabulary)
        # Episodes written just before and after each one in its session (-1: none).
        self._before = np.zeros(0, dtype=np.int32)
        self._after = np.zeros(0, dtype=np.int32)
        self._last_in_session: dict[int, int] = {}
        self._bytes = 0
        self.memo = Memo()
        self.fields = FieldColumns()  # facts' JSON values at the paths searches named (texts never change)

    def __len__(self) -> int:
        return self._size

    @property
    def dimension(self) -> int:
        return self._vectors.dimension if self._vectors is not None else 0

    @property
    def approximate(self) -> bool:
        """True when the vector arm searches lists (the scope passed ``ann_min_rows``)."""
        return self._vectors is not None and self._vectors.approximate

    @property
    def nbytes(self) -> int:
        """Return the bytes this copy's arrays hold (about what it costs in memory), as of its
        last change (summing them is not free: a cache of a thousand copies asks after each read),
        and what its memo and field columns hold."""
        return self._bytes + self.memo.nbytes + self.fields.nbytes

    def _measure(self) -> int:
        arrays = (
            self._rowids,
            self._ready,
            self._source,
            self._status,
            self._session,
            self._before,
            self._after,
            *self._times.values(),
        )
        vectors = self._vectors.nbytes if self._vectors is not None else 0
        return sum(a.nbytes for a in arrays) + vectors + self._lexical.nbytes + 100 * len(self._session_codes)

    def apply(self, rows: Sequence[CopyRow]) -> bool:
        """Insert or update rows (the newest state of each wins), a whole batch at once.

        Return False, changing nothing, when a new row's id is below one the copy holds (rows
        are appended in id order): the caller then rebuilds the copy from scratch.
        """
        if not rows:
            return True
        self.memo.clear()  # what was worked out from the rows may have changed with them
        ids = np.fromiter((row.rowid for row in rows), dtype=np.int64, count=len(rows))
        positions = self.positions_of(ids)
        fresh = positions < 0
        if fresh.any() and self._size and ids[fresh].min() <= self._rowids[self._size - 1]:
            return False
        new_ids = np.unique(ids[fresh])
        first = self._append(new_ids)
        positions[fresh] = first + np.searchsorted(new_ids, ids[fresh])
        new = [(int(p), row) for p, row in zip(positions, rows, strict=True) if p >= first]
        if new:  # a row's text is indexed once: texts never change
            self._lexical.add([p for p, _ in new], [row.body for _, row in new])
            self._link(new)
        self._put_vectors(positions, rows)
        self._source[positions] = [_SOURCES[row.source] for row in rows]
        self._status[positions] = [self._code(self._status_codes, row.status) for row in rows]
        self._session[positions] = [self._code(self._session_codes, row.session_id) for row in rows]
        for name in _TIMES:
            self._times[name][positions] = _instants([getattr(row, name) for row in rows])
        self._bytes = self._measure()
        return True

    def _put_vectors(self, positions: np.ndarray, rows: Sequence[CopyRow]) -> None:
        ready = np.zeros(len(rows), dtype=bool)
        blobs = [(i, row.embedding) for i, row in enumerate(rows) if row.embedding is not None]
        if blobs and self._vectors is None:
            self._vectors = VectorIndex(len(blobs[0][1]) // 4, len(self._rowids), self._ann)
        # A vector of another dimension comes from another embedder: it is not comparable.
        fitting = [(i, b) for i, b in blobs if len(b) == 4 * self.dimension]
        if fitting and self._vectors is not None:
            index = np.array([i for i, _ in fitting], dtype=np.int64)
            matrix = np.frombuffer(b"".join(b for _, b in fitting), dtype="<f4").reshape(len(fitting), -1)
            self._vectors.put(positions[index], matrix.astype(np.float32))
            ready[index] = True
        self._ready[positions] = ready

    def positions_of(self, rowids: np.ndarray) -> np.ndarray:
        """Return each rowid's position in the copy (-1 for a row it does not hold)."""
        if not self._size:
            return np.full(len(rowids), -1, dtype=np.int64)
        held = self._rowids[: self._size]
        at = np.minimum(np.searchsorted(held, rowids), self._size - 1)
        return np.where(held[at] == rowids, at, -1).astype(np.int64)

    def _link(self, new: Sequence[tuple[int, CopyRow]]) -> None:
        """Chain new episodes to the episode written before them in their session."""
        for position, row in new:
            self._before[position] = self._after[position] = -1
            if row.source != "EPISODE" or row.session_id is None:
                continue
            session = self._code(self._session_codes, row.session_id)
            before = self._last_in_session.get(session)
            if before is not None:
                self._before[position], self._after[before] = before, position
            self._last_in_session[session] = position

    def adjacent(self, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Return, aligned with ``rowids``, the rowids of the episodes written just before and
        after each one in its session (-1: none, or not an episode of this scope)."""
        positions = self.positions_of(np.asarray(rowids, dtype=np.int64).reshape(-1))
        known = positions >= 0
        out = []
        for links in (self._before, self._after):
            linked = np.full(len(positions), -1, dtype=np.int64)
            linked[known] = links[positions[known]]
            found = linked >= 0
            linked[found] = self._rowids[linked[found]]
            out.append(linked)
        return out[0], out[1]

    def search(self, query: Vector, filt: CandidateFilter, limit: int, exact: ExactVectors) -> list[Candidate]:
        """Return the top ``limit`` eligible rows by cosine (vectors are unit length): exact below
        the approximate size, re-ranked at full precision (``exact`` reads the vectors)."""
        if self._size == 0 or self._vectors is None or query.shape[0] != self.dimension or limit <= 0:
            return []
        scanned = self._vectors.candidates(query, self._ready[: self._size])
        scanned = scanned[self._eligible(filt, scanned)]
        positions, scores = self._vectors.top(query, scanned, self._rowids, limit, exact)
        return list(map(Candidate, self._rowids[positions].tolist(), np.asarray(scores, dtype=np.float64).tolist()))

    def text_search(self, words: Sequence[str], filt: CandidateFilter, limit: int) -> list[Candidate]:
        """Return the top ``limit`` eligible rows by BM25 (rows no word matches are left out)."""
        if self._size == 0 or not words or limit <= 0:
            return []
        scores = self._lexical.scores(words, self._size)
        matched = np.flatnonzero(scores > 0)
        return self._top(scores, matched[self._eligible(filt, matched)], limit)

    def rank(
        self, query: Vector, words: Sequence[str], rowids: np.ndarray, limit: int, exact: ExactVectors
    ) -> list[Candidate]:
        """Return the ``limit`` best of ``rowids`` by relevance, best first (ties: the newest row
        first): the larger of the row's cosine with ``query`` (its vector ready) and its share of
        the query words' information (IDF within the scope, ``lexical.stem_weights``), in [0, 1].
        Exact: approximate cosines bound every row, and only rows that can reach the top are
        scored at full precision (held by a small scope's copy, else read back with ``exact``)."""
        ids = np.unique(np.asarray(rowids, dtype=np.int64).reshape(-1))  # ascending: the codes read as runs
        positions = self.positions_of(ids)
        ids, positions = ids[positions >= 0], positions[positions >= 0]
        if limit <= 0 or not len(ids):
            return []
        stems = stem_weights(words, len(self), {w: self.document_frequency(w) for w in words})
        evidence = self._shares(stems, positions)
        lower, upper = evidence.copy(), evidence.copy()
        ready = np.zeros(len(ids), dtype=bool)
        if self._vectors is not None and query.shape[0] == self.dimension:
            ready = self._ready[positions]
            approx, reach = self._vectors.bounds(query, positions[ready])
            lower[ready] = np.maximum(evidence[ready], approx - reach)
            upper[ready] = np.maximum(evidence[ready], approx + reach)
        shortlist = np.arange(len(ids))
        if len(ids) > limit:
            floor = np.partition(np.clip(lower, 0, 1), len(ids) - limit)[len(ids) - limit]
            shortlist = np.flatnonzero(np.clip(upper, 0, 1) >= floor)
        scores = evidence[shortlist]
        wanted = shortlist[ready[shortlist]]
        if len(wanted) and self._vectors is not None:
            found, matrix = self._vectors.exact(positions[wanted], ids[wanted], exact)
            if len(found):
                cosines = dict(zip(found.tolist(), (matrix @ query).astype(np.float64).tolist(), strict=True))
                scores = np.array(
                    [max(e, cosines.get(int(i), e)) for e, i in zip(scores.tolist(), ids[shortlist], strict=True)]
                )
        scores = np.clip(scores, 0.0, 1.0)
        order = np.lexsort((-ids[shortlist], -scores))[:limit]
        return [Candidate(int(ids[shortlist][i]), float(scores[i])) for i in order]

    def evidence(self, stems: Mapping[str, float], rowids: Sequence[int]) -> dict[int, float]:
        """The share of ``stems``' weight that each of ``rowids`` holds in its indexed text, as
        ``relevance.QueryWords.evidence`` finds it by stemming that text (rows the copy holds)."""
        ids = np.asarray(rowids, dtype=np.int64)
        positions = self.positions_of(ids)
        held = positions >= 0
        if sum(stems.values()) <= 0 or not held.any():
            return {}
        return dict(zip(ids[held].tolist(), self._shares(stems, positions[held]).tolist(), strict=True))

    def _shares(self, stems: Mapping[str, float], positions: np.ndarray) -> np.ndarray:
        """The share of ``stems``' weight each document at ``positions`` holds (0 without weight)."""
        total = sum(stems.values())
        return self._lexical.weights(stems, self._size)[positions] / total if total > 0 else np.zeros(len(positions))

    def document_frequency(self, word: str) -> int:
        """Return how many of the scope's rows (any status) contain ``word``."""
        return self._lexical.document_frequency(word)

    def _top(self, scores: np.ndarray, candidates: np.ndarray, limit: int) -> list[Candidate]:
        """The ``limit`` best of the ``candidates`` positions, best first (ties by row order)."""
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
        order = candidates[np.lexsort((self._rowids[candidates], -scores[candidates]))]
        return list(map(Candidate, self._rowids[order].tolist(), scores[order].astype(np.float64).tolist()))

    def _eligible(self, filt: CandidateFilter, at: np.ndarray) -> np.ndarray:
        """The same predicate as the SQL filter (storage/columns.py), over the positions ``at``."""
        mask = np.ones(len(at), dtype=bool)
        if filt.statuses is not None:
            codes = [self._status_codes[s] for s in filt.statuses if s in self._status_codes]
            mask &= _allowed(codes, len(self._status_codes))[self._status[at]]
        if set(filt.sources) != set(_SOURCES):
            mask &= _allowed([_SOURCES[s] for s in filt.sources], len(_SOURCES))[self._source[at]]
        if filt.exclude_session_id is not None:
            code = self._session_codes.get(filt.exclude_session_id)
            if code is not None:
                mask &= self._session[at] != code
        eligible: np.ndarray = mask & self._eligible_in_time(filt, at)
        return eligible

    def _eligible_in_time(self, filt: CandidateFilter, at: np.ndarray) -> np.ndarray:
        mask = np.ones(len(at), dtype=bool)
        if filt.as_of is None and filt.believed_by is None and filt.valid_at is None and filt.expires_after is None:
            return mask
        times = {name: values[at] for name, values in self._times.items()}
        # NaT stands for NULL: comparisons with it are False.
        if filt.as_of is not None:
            t = _instant(filt.as_of)
            mask &= times["active_from"] <= t
            mask &= np.isnat(times["retired_at"]) | (times["retired_at"] > t)
        believed_by = _instant(filt.believed_by) if filt.believed_by is not None else None
        if believed_by is not None:  # as in storage/columns.py: filter_clause
            known = np.where(np.isnat(times["active_from"]), times["retired_at"], times["active_from"])
            mask &= known <= believed_by
        if filt.valid_at is not None:
            t = _instant(filt.valid_at)
            mask &= np.isnat(times["valid_from"]) | (times["valid_from"] <= t)
            mask &= np.isnat(times["valid_until"]) | (times["valid_until"] > t)
            if filt.as_of is None:  # as in storage/columns.py: filter_clause
                still = np.isnat(times["invalid_at"]) | (times["invalid_at"] > t)
                if believed_by is not None:
                    still |= times["retired_at"] > believed_by
                mask &= still
        if filt.expires_after is not None:
            t = _instant(filt.expires_after)
            mask &= np.isnat(times["valid_until"]) | (times["valid_until"] > t)
        return mask

    def _append(self, rowids: np.ndarray) -> int:
        """Append rows (ascending ids above every held one); return the first one's position."""
        first = self._size
        if first + len(rowids) > len(self._rowids):
            self._grow(max(64, 2 * len(self._rowids), first + len(rowids)))
        self._rowids[first : first + len(rowids)] = rowids
        self._size += len(rowids)
        return first

    def _grow(self, capacity: int) -> None:
        def grown(array: np.ndarray, fill: int = 0) -> np.ndarray:
            bigger = np.full((capacity, *array.shape[1:]), fill, dtype=array.dtype)
            bigger[: len(array)] = array
            return bigger

        self._rowids = grown(self._rowids)
        self._ready = grown(self._ready)
        self._source = grown(self._source)
        self._status = grown(self._status)
        self._session = grown(self._session)
        self._before = grown(self._before, fill=-1)
        self._after = grown(self._after, fill=-1)
        self._times = {name: grown(values) for name, values in self._times.items()}
        if self._vectors is not None:
            self._vectors.grow(capacity)

    @staticmethod
    def _code(codes: dict[str | None, int], value: str | None) -> int:
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(codes)
        return code


def _instants(texts: Sequence[str | None]) -> np.ndarray:
    """Canonical timestamps (``...Z``) as microsecond datetimes, NaT for NULL; vectorised."""
    return np.array([t[:-1] if t else "NaT" for t in texts], dtype="datetime64[us]")


def encode(vector: np.ndarray) -> bytes:
    """Return the canonical blob of a vector: little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()


def _allowed(codes: Sequence[int], size: int) -> np.ndarray:
    """A lookup table over the codes 0..size-1: True for ``codes`` (cheaper than ``np.isin`` for
    the few codes a filter names)."""
    table = np.zeros(max(size, 1), dtype=bool)
    table[list(codes)] = True
    return table
