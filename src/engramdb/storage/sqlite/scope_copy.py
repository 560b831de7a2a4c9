"""Both recall arms of one scope over an in-memory copy of it: exact vectors and BM25.

Reading every blob of a large scope from SQLite on each query would dominate recall latency,
so each scope's ready vectors live in one float32 matrix, and its texts in an inverted index
(core/lexical.py), beside the columns the filters read. The copy is refreshed
incrementally: every write stamps its rows with the tenant's ``change_seq``, and a query first
pulls the rows of its scope stamped after the copy's own sequence (another process may have
written them), so a memory is found lexically the moment its write returns. Both searches are
exact; ineligible rows are masked out before the top-k is selected, so a filter can never cost
a true match its place.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engramdb import clock
from engramdb.core.lexical import LexicalIndex
from engramdb.storage.columns import lexical_text
from engramdb.storage.port import Candidate, CandidateFilter, Vector

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
    body: str = ""  # what the lexical arm indexes (storage/columns.py: lexical_text)


_TIMES = ("active_from", "retired_at", "valid_from", "valid_until", "invalid_at")


def _instant(text: str) -> np.datetime64:
    """A filter's time at microsecond precision (float seconds lose microseconds past ~2255)."""
    return np.datetime64(clock.normalize(text)[:-1], "us")


class ScopeCopy:
    """One scope's ready vectors and inverted index, with what the filters need beside them."""

    def __init__(self) -> None:
        self.seq = 0
        self.erasures = 0  # the tenant's erasure count when this copy started
        self.model: str | None = None  # whose vectors it holds (None: any of the one dimension)
        self.dimension = 0
        self._size = 0
        self._position: dict[int, int] = {}
        self._rowids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._ready = np.zeros(0, dtype=bool)
        self._source = np.zeros(0, dtype=np.int8)
        self._status = np.zeros(0, dtype=np.int16)
        self._session = np.zeros(0, dtype=np.int32)
        self._times = {name: np.zeros(0, dtype="datetime64[us]") for name in _TIMES}
        self._status_codes: dict[str | None, int] = {}
        self._session_codes: dict[str | None, int] = {None: 0}
        self._lexical = LexicalIndex()
        # Episodes written just before and after each one in its session (-1: none).
        self._before = np.zeros(0, dtype=np.int32)
        self._after = np.zeros(0, dtype=np.int32)
        self._last_in_session: dict[int, int] = {}

    def __len__(self) -> int:
        return self._size

    def apply(self, rows: Sequence[CopyRow]) -> None:
        """Insert or update rows (the newest state of each wins), a whole batch at once."""
        if not rows:
            return
        known = len(self._position)
        positions = np.array([self._position_of(row.rowid) for row in rows], dtype=np.int64)
        new = [(int(p), row) for p, row in zip(positions, rows, strict=True) if p >= known]
        if new:  # a row's text is indexed once: texts never change
            self._lexical.add([p for p, _ in new], [row.body for _, row in new])
            self._link(new)
        ready = np.zeros(len(rows), dtype=bool)
        blobs = [(i, row.embedding) for i, row in enumerate(rows) if row.embedding is not None]
        if blobs and self.dimension == 0:
            self._set_dimension(len(blobs[0][1]) // 4)
        # A vector of another dimension comes from another embedder: it is not comparable.
        fitting = [(i, b) for i, b in blobs if len(b) == 4 * self.dimension]
        if fitting:
            index = np.array([i for i, _ in fitting], dtype=np.int64)
            matrix = np.frombuffer(b"".join(b for _, b in fitting), dtype="<f4")
            self._matrix[positions[index]] = matrix.reshape(len(fitting), self.dimension)
            ready[index] = True
        self._ready[positions] = ready
        self._source[positions] = [_SOURCES[row.source] for row in rows]
        self._status[positions] = [self._code(self._status_codes, row.status) for row in rows]
        self._session[positions] = [self._code(self._session_codes, row.session_id) for row in rows]
        for name in _TIMES:
            self._times[name][positions] = _instants([getattr(row, name) for row in rows])

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
        get = self._position.get
        positions = np.fromiter((get(r, -1) for r in rowids), dtype=np.int64, count=len(rowids))
        known = positions >= 0
        out = []
        for links in (self._before, self._after):
            linked = np.full(len(positions), -1, dtype=np.int64)
            linked[known] = links[positions[known]]
            found = linked >= 0
            linked[found] = self._rowids[linked[found]]
            out.append(linked)
        return out[0], out[1]

    def _position_of(self, rowid: int) -> int:
        position = self._position.get(rowid)
        return self._append(rowid) if position is None else position

    def search(self, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        """Return the exact top ``limit`` eligible rows by cosine (vectors are unit length)."""
        if self._size == 0 or query.shape[0] != self.dimension or limit <= 0:
            return []
        eligible = self._eligible(filt) & self._ready[: self._size]
        scores = self._matrix[: self._size] @ query
        return self._top(scores, eligible, limit)

    def text_search(self, words: Sequence[str], filt: CandidateFilter, limit: int) -> list[Candidate]:
        """Return the top ``limit`` eligible rows by BM25 (rows no word matches are left out)."""
        if self._size == 0 or not words or limit <= 0:
            return []
        scores = self._lexical.scores(words, self._size)
        return self._top(scores, self._eligible(filt) & (scores > 0), limit)

    def document_frequency(self, word: str) -> int:
        """Return how many of the scope's rows (any status) contain ``word``."""
        return self._lexical.document_frequency(word)

    def _top(self, scores: np.ndarray, eligible: np.ndarray, limit: int) -> list[Candidate]:
        """The ``limit`` best eligible positions, best first (ties by row order)."""
        candidates = np.flatnonzero(eligible)
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
        order = candidates[np.lexsort((self._rowids[candidates], -scores[candidates]))]
        return [Candidate(int(self._rowids[i]), float(scores[i])) for i in order]

    def _eligible(self, filt: CandidateFilter) -> np.ndarray:
        """The same predicate as the SQL filter (storage/sqlite/sql.py), vectorised."""
        n = self._size
        mask = np.ones(n, dtype=bool)
        if filt.statuses is not None:
            codes = [self._status_codes[s] for s in filt.statuses if s in self._status_codes]
            mask &= np.isin(self._status[:n], codes)
        mask &= np.isin(self._source[:n], [_SOURCES[s] for s in filt.sources])
        if filt.exclude_session_id is not None:
            code = self._session_codes.get(filt.exclude_session_id)
            if code is not None:
                mask &= self._session[:n] != code
        times = {name: values[:n] for name, values in self._times.items()}
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

    def _set_dimension(self, dimension: int) -> None:
        self.dimension = dimension
        self._matrix = np.zeros((len(self._rowids), dimension), dtype=np.float32)

    def _append(self, rowid: int) -> int:
        if self._size == len(self._rowids):
            self._grow(max(64, 2 * self._size))
        position = self._size
        self._rowids[position] = rowid
        self._position[rowid] = position
        self._size += 1
        return position

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
        if self.dimension:
            self._matrix = grown(self._matrix)

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


class ScopeCache:
    """Per-scope vector copies with a bound on the total number of rows held (LRU by scope)."""

    def __init__(self, max_rows: int = 2_000_000) -> None:
        self._max_rows = max_rows
        self._scopes: OrderedDict[str, ScopeCopy] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def lock_for(self, scope_key: str) -> threading.Lock:
        """Return the lock that serialises refreshes of one scope."""
        with self._guard:
            return self._locks.setdefault(scope_key, threading.Lock())

    def scope(self, scope_key: str) -> ScopeCopy:
        """Return the scope's copy (empty with seq 0 when not cached yet)."""
        with self._guard:
            vectors = self._scopes.get(scope_key)
            if vectors is None:
                vectors = self._scopes[scope_key] = ScopeCopy()
            self._scopes.move_to_end(scope_key)
            self._evict(keep=scope_key)
            return vectors

    def reset(self, scope_key: str) -> ScopeCopy:
        """Replace a scope's copy with an empty one (it reloads from the file) and return it."""
        with self._guard:
            vectors = self._scopes[scope_key] = ScopeCopy()
            return vectors

    def clear(self) -> None:
        """Drop every copy (they reload on the next query)."""
        with self._guard:
            self._scopes.clear()

    def _evict(self, keep: str) -> None:
        total = sum(len(v) for v in self._scopes.values())
        for key in list(self._scopes):
            if total <= self._max_rows:
                break
            if key != keep:
                total -= len(self._scopes.pop(key))


COPY_ROW_SQL = (
    "SELECT rowid, source, status, session_id, "
    "CASE WHEN embed_state = 'ready' AND (? IS NULL OR embed_model = ?) THEN embedding END, "
    "active_from, retired_at, valid_from, valid_until, invalid_at, text, subject_key, kind FROM memories"
)


def rows_from(records: Sequence[Sequence[Any]]) -> list[CopyRow]:
    """Return cache rows from the columns of ``COPY_ROW_SQL``, in order."""
    return [CopyRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], body=lexical_text(r[10], r[11], r[12]))
            for r in records]  # fmt: skip
