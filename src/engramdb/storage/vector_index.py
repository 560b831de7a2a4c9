"""The vector arm of an in-memory scope copy: int8 codes, exact by re-rank; lists above a size.

Each unit vector ``x`` is held as int8 codes ``c`` with a scale ``s`` (``x ~ s * c``) and the
norm of what that leaves out, ``e = |x - s * c|``: a quarter of float32's bytes. For a query
``q``, ``|q.x - s * q.c| <= |q| * e``, so the rows whose upper bound reaches the ``k``-th best
lower bound hold the true top ``k``; only those are read back at full precision (the caller's
``exact``) and ranked by their true cosine. The search is exact: the codes only decide which
rows are worth reading.

A small scope (up to ``FULL_ROWS`` rows of capacity) also keeps its vectors at full precision:
the exact cosine of every row is then one product, with no codes to scan and nothing to read
back (reading a few hundred vectors from the database per query cost more than the rest of the
arm). Up to ``PRODUCT_ROWS`` that product is the dense arm; above it, up to ``FULL_ROWS``, the
codes choose the short list and the held vectors score it (a structured fact search's ranking
of a 10,000-item LangGraph namespace too): nothing is read back. The answer is the same; a scope
that grows past ``FULL_ROWS`` drops the full copy. At 16,384 rows and 384 dimensions that is
25 MB beside 6 MB of codes, counted against the scope cache's memory limit.

Scanning every code costs in proportion to the scope. Above ``ann_min_rows`` ready vectors the
index trains an inverted file (spherical k-means, about sqrt(n) lists) and a query scans only
the lists nearest it (``probe_share`` of them) plus the rows that arrived since training. That
is approximate: a true neighbour in a list not probed is missed. ``engram bench bigscope``
measures its recall against the exact search (bench/RESULTS.md).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# rowids -> (the rowids found, their full-precision vectors as rows of a float32 matrix)
ExactVectors = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
# Rows decoded at once, into one buffer per request thread: 1,024 rows of 384 floats (1.5 MB) scan
# 10,000 codes as fast as 4,096 did (0.68 vs 0.67 ms) and hold a quarter of the memory in each of
# up to 40 threads (the server's RSS under an overload of the 70/30 mix: 484 vs 622 MB).
_CHUNK = 1024
_RUN = 64  # adjacent rows worth decoding as a slice rather than gathering
_SLACK = 1e-5  # float32 rounding of the approximate dot products, kept inside the bound
_TRAIN_ITERATIONS = 8
_TRAIN_SAMPLE_PER_LIST = 64
FULL_ROWS = 16_384  # rows of capacity up to which a scope keeps float32 vectors too (25 MB at 384)
# Up to this many rows of capacity the dense arm takes every exact cosine as one product; above it
# gathering the float32 rows cost more CPU than scanning the codes (10,000 x 384: 10.5 ms vs 5.2 ms),
# which then score their short list from the held vectors.
PRODUCT_ROWS = 8192


@dataclass(frozen=True)
class AnnSettings:
    """When the vector arm stops scanning every row, and how much it scans then."""

    min_rows: int = 200_000  # ready vectors in a scope before it is searched approximately
    probe_share: float = 0.05  # share of the lists a query scans


class VectorIndex:
    """One scope's vectors as codes, addressed by the scope copy's row positions."""

    def __init__(self, dimension: int, capacity: int, ann: AnnSettings) -> None:
        self.dimension = dimension
        self._ann = ann
        self._codes = np.zeros((capacity, dimension), dtype=np.int8)
        self._scale = np.zeros(capacity, dtype=np.float32)
        self._error = np.zeros(capacity, dtype=np.float32)
        self._lists: _Lists | None = None
        # Once lists are trained, the code arrays hold each list's rows side by side (a probe
        # then decodes slices, 4x faster than gathering scattered rows): position -> array row.
        self._slot: np.ndarray | None = None
        self._full = np.zeros((capacity, dimension), dtype=np.float32) if capacity <= FULL_ROWS else None

    @property
    def nbytes(self) -> int:
        lists = self._lists.nbytes if self._lists is not None else 0
        full = self._full.nbytes if self._full is not None else 0
        return self._codes.nbytes + self._scale.nbytes + self._error.nbytes + lists + full

    @property
    def approximate(self) -> bool:
        """True once the index searches lists instead of every row."""
        return self._lists is not None

    def grow(self, capacity: int) -> None:
        held = len(self._codes)
        codes = np.zeros((capacity, self.dimension), dtype=np.int8)
        codes[:held] = self._codes
        self._codes = codes
        self._scale = _grown(self._scale, capacity)
        self._error = _grown(self._error, capacity)
        if self._full is not None:
            self._full = _grown_rows(self._full, capacity) if capacity <= FULL_ROWS else None
        if self._slot is not None:  # new positions take the new rows at the end
            self._slot = np.concatenate([self._slot, np.arange(held, capacity, dtype=np.int64)])

    def _rows(self, positions: np.ndarray) -> np.ndarray:
        return positions if self._slot is None else self._slot[positions]

    def put(self, positions: np.ndarray, matrix: np.ndarray) -> None:
        """Hold these rows' vectors (float32, one row each), replacing any held before."""
        peak = np.abs(matrix).max(axis=1)
        scale = np.where(peak > 0, peak / 127, 1.0).astype(np.float32)
        codes = np.rint(matrix / scale[:, None]).astype(np.int8)
        residual = matrix - codes.astype(np.float32) * scale[:, None]
        rows = self._rows(positions)
        self._codes[rows] = codes
        self._scale[rows] = scale
        self._error[rows] = np.linalg.norm(residual, axis=1) + _SLACK
        if self._full is not None:
            self._full[rows] = matrix
        if self._lists is not None:
            self._lists.arrived(positions)

    def candidates(self, query: np.ndarray, ready: np.ndarray) -> np.ndarray:
        """Return the positions a search scans: every ready row, or the probed lists' rows."""
        count = int(ready.sum())
        if count >= self._ann.min_rows and (self._lists is None or self._lists.stale(count)):
            self._lists = _Lists.train(self._decoded, np.flatnonzero(ready))
            self._arrange(self._lists.order)
        if self._lists is None:
            return np.flatnonzero(ready)
        scanned: np.ndarray = self._lists.probe(query, self._ann.probe_share)
        kept: np.ndarray = scanned[ready[scanned]]
        return kept

    def top(
        self, query: np.ndarray, positions: np.ndarray, rowids: np.ndarray, limit: int, exact: ExactVectors
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return the ``limit`` best of ``positions`` by true cosine: (positions, scores), best first
        (ties by rowid). ``rowids`` are the positions' rowids; ``exact`` reads full vectors."""
        if self._full is not None and len(self._full) <= PRODUCT_ROWS:  # every exact cosine at once
            scores = (self._full[self._rows(positions)] @ query.astype(np.float32, copy=False)).astype(np.float64)
            order = np.lexsort((rowids[positions], -scores))[:limit]
            return positions[order], scores[order]
        approx = self._scores(query, positions)
        reach = float(np.linalg.norm(query)) * self._error[self._rows(positions)]
        shortlist = np.arange(len(positions))
        if len(positions) > limit:
            lower = approx - reach
            floor = np.partition(lower, len(lower) - limit)[len(lower) - limit]
            shortlist = np.flatnonzero(approx + reach >= floor)
        found, matrix = self.exact(positions[shortlist], rowids[positions[shortlist]], exact)
        if not len(found):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        at = dict(zip(rowids[positions[shortlist]].tolist(), positions[shortlist].tolist(), strict=True))
        chosen = np.array([at[r] for r in found.tolist()], dtype=np.int64)
        scores = (matrix @ query).astype(np.float64)
        order = np.lexsort((found, -scores))[:limit]
        return chosen[order], scores[order]

    def exact(self, positions: np.ndarray, rowids: np.ndarray, read: ExactVectors) -> tuple[np.ndarray, np.ndarray]:
        """Return the full-precision vectors of the rows at ``positions`` (their ``rowids``) as
        ``read`` does: (rowids found, one float32 row each); held ones are not read again."""
        if self._full is None:
            return read(rowids)
        return rowids, self._full[self._rows(positions)]

    def bounds(self, query: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the approximate cosines of the rows at ``positions`` and how far each true one
        may lie from it (``|q.x - approx| <= reach``)."""
        return self._scores(query, positions), float(np.linalg.norm(query)) * self._error[self._rows(positions)]

    def _arrange(self, grouped: np.ndarray) -> None:
        """Reorder the code arrays: the positions ``grouped`` (list by list) first, the rest after."""
        rest = np.setdiff1d(np.arange(len(self._codes)), grouped, assume_unique=True)
        order = np.concatenate([grouped, rest])
        rows = self._rows(order)
        self._codes, self._scale, self._error = self._codes[rows], self._scale[rows], self._error[rows]
        if self._full is not None:
            self._full = self._full[rows]
        self._slot = np.empty(len(order), dtype=np.int64)
        self._slot[order] = np.arange(len(order))

    def _scores(self, query: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Approximate cosines of the rows at ``positions``: runs of adjacent array rows decoded as
        slices, the scattered rest gathered; into one float buffer per thread (a fresh array per
        chunk cost a page fault per 4 kB)."""
        rows = self._rows(positions)
        out = np.empty(len(rows), dtype=np.float32)
        query = query.astype(np.float32, copy=False)
        buffer = _buffer(self.dimension)
        cuts = np.flatnonzero(np.diff(rows) != 1) + 1
        starts, ends = np.r_[0, cuts], np.r_[cuts, len(rows)]
        runs = (ends - starts) >= _RUN
        for start, end in zip(starts[runs].tolist(), ends[runs].tolist(), strict=True):
            for at in range(start, end, _CHUNK):
                stop = min(end, at + _CHUNK)
                floats = buffer[: stop - at]
                floats[...] = self._codes[rows[at] : rows[at] + stop - at]
                np.dot(floats, query, out=out[at:stop])
        scattered = np.concatenate(
            [np.arange(a, b) for a, b in zip(starts[~runs], ends[~runs], strict=True)] or [np.zeros(0, dtype=np.int64)]
        )
        for at in range(0, len(scattered), _CHUNK):
            part = scattered[at : at + _CHUNK]
            floats = buffer[: len(part)]
            floats[...] = self._codes[rows[part]]
            out[part] = floats @ query
        scores: np.ndarray = out * self._scale[rows]
        return scores

    def _decoded(self, positions: np.ndarray) -> np.ndarray:
        rows = self._rows(positions)
        vectors: np.ndarray = self._codes[rows].astype(np.float32) * self._scale[rows, None]
        return vectors


class _Lists:
    """An inverted file: k-means centroids, and the trained rows grouped by nearest centroid."""

    def __init__(self, centroids: np.ndarray, order: np.ndarray, offsets: np.ndarray, trained: int) -> None:
        self.centroids = centroids
        self.order = order  # trained positions, grouped by list
        self.offsets = offsets  # list i holds order[offsets[i]:offsets[i + 1]]
        self.trained = trained
        self._arrived: list[np.ndarray] = []  # positions given a vector since (always scanned)

    @classmethod
    def train(cls, decoded: Callable[[np.ndarray], np.ndarray], positions: np.ndarray, seed: int = 0) -> _Lists:
        """Cluster a sample of the rows at ``positions`` (``decoded`` gives their vectors), then
        put every row in its nearest list, decoding a chunk at a time (no full float copy)."""
        count = max(1, round(math.sqrt(len(positions))))
        rng = np.random.default_rng(seed)
        sample = decoded(
            np.sort(rng.choice(positions, min(len(positions), count * _TRAIN_SAMPLE_PER_LIST), replace=False))
        )
        centroids = sample[rng.choice(len(sample), count, replace=False)]
        for _ in range(_TRAIN_ITERATIONS):
            nearest = _nearest(centroids, sample)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, sample)
            empty = np.linalg.norm(sums, axis=1) == 0
            sums[empty] = centroids[empty]  # a list that lost every row keeps its centroid
            centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        step = 16 * _CHUNK
        nearest = np.concatenate(
            [_nearest(centroids, decoded(positions[i : i + step])) for i in range(0, len(positions), step)]
        )
        order = np.argsort(nearest, kind="stable")
        offsets = np.searchsorted(nearest[order], np.arange(count + 1))
        return cls(centroids.astype(np.float32), positions[order], offsets, len(positions))

    @property
    def nbytes(self) -> int:
        return self.centroids.nbytes + self.order.nbytes + self.offsets.nbytes + sum(a.nbytes for a in self._arrived)

    def stale(self, ready: int) -> bool:
        """True when the scope has grown by half since training: retrain."""
        return ready >= 1.5 * self.trained

    def arrived(self, positions: np.ndarray) -> None:
        self._arrived.append(np.asarray(positions, dtype=np.int64))

    def probe(self, query: np.ndarray, share: float) -> np.ndarray:
        """Return the positions in the lists nearest ``query`` and every row that arrived since."""
        count = len(self.offsets) - 1
        probes = min(count, max(1, math.ceil(share * count)))
        nearest = np.argpartition(-(self.centroids @ query), probes - 1)[:probes]
        parts = [self.order[self.offsets[i] : self.offsets[i + 1]] for i in np.sort(nearest)]
        if not self._arrived:  # the lists do not overlap
            return np.concatenate(parts)
        every = np.concatenate([*parts, *self._arrived])  # a row re-embedded since is in both
        _, first = np.unique(every, return_index=True)
        kept: np.ndarray = every[np.sort(first)]  # list order kept: lists are adjacent rows
        return kept


def _nearest(centroids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Index of the nearest centroid (largest cosine) of every vector, a chunk at a time."""
    out = np.empty(len(vectors), dtype=np.int64)
    for start in range(0, len(vectors), 16 * _CHUNK):
        out[start : start + 16 * _CHUNK] = np.argmax(vectors[start : start + 16 * _CHUNK] @ centroids.T, axis=1)
    return out


_THREAD = threading.local()


def _buffer(dimension: int) -> np.ndarray:
    """This thread's buffer of ``_CHUNK`` float rows of ``dimension``."""
    buffer: np.ndarray | None = getattr(_THREAD, "buffer", None)
    if buffer is None or buffer.shape[1] != dimension:
        buffer = _THREAD.buffer = np.empty((_CHUNK, dimension), dtype=np.float32)
    return buffer


def _grown_rows(matrix: np.ndarray, capacity: int) -> np.ndarray:
    bigger = np.zeros((capacity, matrix.shape[1]), dtype=matrix.dtype)
    bigger[: len(matrix)] = matrix
    return bigger


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    bigger = np.zeros(capacity, dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger
