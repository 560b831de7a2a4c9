"""The scope copies a process holds: up to a memory limit, least recently used dropped first,
one vocabulary for all; and bringing a copy up to date before it is read."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TypeVar

import numpy as np

from engramdb.lexical.index import Vocabulary
from engramdb.storage.scope_copy import CopyRow, ScopeCopy
from engramdb.storage.vector_index import AnnSettings


class ScopeCache:
    """Scope copies up to a memory limit (least recently used dropped first), one vocabulary for
    all of them, and the order they were last used in (what a restart warms first)."""

    def __init__(self, max_bytes: int = 1024 * 2**20, ann: AnnSettings | None = None) -> None:
        self.max_bytes = max_bytes
        self.ann = ann or AnnSettings()
        self.vocabulary = Vocabulary()
        self.loads = 0  # copies built from nothing (a miss: the scope was never held, or dropped)
        self.on_load: Callable[[], None] = lambda: None  # told after each miss (outside the lock)
        self._scopes: OrderedDict[str, ScopeCopy] = OrderedDict()
        self._sizes: dict[str, int] = {}  # bytes of each copy as last settled
        self._total = 0
        # A scope's lock lives while some reader holds it: a cache that read a million scopes once
        # keeps no million locks, and a lock no reader holds serialises nothing.
        self._locks: weakref.WeakValueDictionary[str, ScopeLock] = weakref.WeakValueDictionary()
        self._sources: dict[str, Callable[[], Source]] = {}  # how each held copy reads its scope (freshen)
        self._written: OrderedDict[str, Callable[[], object]] = OrderedDict()  # not held: how to load each
        self._guard = threading.Lock()

    def lock_for(self, scope_key: str) -> ScopeLock:
        """Return the lock that serialises refreshes of one scope (the same one while it is held)."""
        with self._guard:
            lock = self._locks.get(scope_key)
            if lock is None:
                lock = self._locks[scope_key] = ScopeLock()
            return lock

    def scope(self, scope_key: str, renew: Callable[[], Source] | None = None) -> ScopeCopy:
        """Return the scope's copy (empty with seq 0 when not cached yet), now the most recent;
        ``renew``: how ``freshen`` reads the scope from now on (a source made anew each time)."""
        with self._guard:
            copy = self._scopes.get(scope_key)
            missed = copy is None
            if copy is None:
                copy = self._scopes[scope_key] = self.fresh()
                self.loads += 1
            self._scopes.move_to_end(scope_key)
            if renew is not None:
                self._sources[scope_key] = renew
        if missed:
            self.on_load()
        return copy

    def fresh(self) -> ScopeCopy:
        """Return an empty copy that shares this cache's vocabulary and settings."""
        return ScopeCopy(self.vocabulary, self.ann)

    def recent(self, limit: int) -> list[tuple[str, ScopeCopy, Callable[[], Source]]]:
        """The ``limit`` most recently used copies with how to read them, most recent first."""
        with self._guard:
            return list(
                islice(
                    (
                        (key, copy, self._sources[key])
                        for key, copy in reversed(self._scopes.items())
                        if key in self._sources
                    ),
                    limit,
                )
            )

    def note_written(self, scope_key: str, load: Callable[[], object]) -> None:
        """Remember a scope whose rows just became searchable, if its copy is not held, and how to
        load it (``load_written``): an agent recalls soon after it writes, and the first recall of
        a scope would otherwise build its copy (tens of ms for a conversation, seconds for 100,000 rows)."""
        with self._guard:
            if scope_key in self._scopes:
                return
            self._written[scope_key] = load
            self._written.move_to_end(scope_key)
            while len(self._written) > WRITTEN_KEPT:
                self._written.popitem(last=False)

    def take_written(self) -> tuple[str, Callable[[], object]] | None:
        """The scope written most recently whose copy is not held, and how to load it; None if none."""
        with self._guard:
            while self._written:
                key, load = self._written.popitem()
                if key not in self._scopes:
                    return key, load
            return None

    def current(self, scope_key: str) -> ScopeCopy | None:
        """The copy held for the scope now, without making it the most recent."""
        with self._guard:
            return self._scopes.get(scope_key)

    def replace(self, scope_key: str, copy: ScopeCopy) -> None:
        """Put a rebuilt copy in place of the scope's one."""
        with self._guard:
            self._scopes[scope_key] = copy

    def settle(self, keep: str) -> None:
        """Count ``keep``'s copy as it is now, then drop least recently used copies (never
        ``keep``) until the held bytes fit the limit. Each copy counts ``COPY_OVERHEAD`` bytes
        besides its arrays, so copies of empty scopes are bounded too; and only the copies dropped
        are visited, so a recall costs no more when a million scopes are held."""
        with self._guard:
            copy = self._scopes.get(keep)
            if copy is not None:
                size = copy.nbytes + COPY_OVERHEAD
                self._total += size - self._sizes.get(keep, 0)
                self._sizes[keep] = size
            while self._total > self.max_bytes:
                oldest = next((key for key in self._scopes if key != keep), None)
                if oldest is None:
                    break
                del self._scopes[oldest]
                self._sources.pop(oldest, None)
                self._total -= self._sizes.pop(oldest, 0)

    @property
    def nbytes(self) -> int:
        with self._guard:
            return self._total

    def held(self, limit: int | None = None) -> list[tuple[str, int]]:
        """Return (key, rows) of the copies held, most recently used first (the first ``limit``)."""
        with self._guard:
            return [(key, len(copy)) for key, copy in islice(reversed(self._scopes.items()), limit)]

    def holds(self, scope_key: str) -> bool:
        with self._guard:
            return scope_key in self._scopes

    def clear(self) -> None:
        """Drop every copy (they reload on the next query)."""
        with self._guard:
            self._scopes.clear()
            self._sources.clear()
            self._written.clear()
            self._sizes.clear()
            self._total = 0


class ScopeLock:
    """One scope's refresh lock, held with ``with`` (a plain lock cannot be weakly referenced)."""

    __slots__ = ("__weakref__", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> ScopeLock:
        self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


T = TypeVar("T")


COPY_OVERHEAD = 6 * 1024  # bytes a held copy costs beyond its arrays (an empty scope's, measured: bench/RESULTS.md)
RECENT_LISTED = 4_096  # the held scopes a restart is told of, most recent first (what it warms)
WRITTEN_KEPT = 64  # scopes written lately and not held that a cache remembers (the most recent)
FRESHEN_SCOPES = 8  # the most recently used copies a server keeps up to date between recalls
_PAGE = 20_000  # rows read and applied at once: a million-row scope never sits in memory as rows


@dataclass(frozen=True)
class Source:
    """How a copy reads its scope: the tenant's change counter, the ids of the scope's rows
    stamped after a sequence number, and rows by id (in id order)."""

    current_seq: Callable[[], int]
    changed_ids: Callable[[int], Sequence[int]]
    rows: Callable[[Sequence[int]], list[CopyRow]]
    # What a copy's rows depend on beyond the counter: its scope's erasures (a deletion leaves no
    # changed row to refresh) and the model whose vectors it holds. A copy of another is rebuilt.
    generation: Callable[[], object] = lambda: None


def erasure_key(scope_key: str) -> str:
    """The tenant counter (a ``meta`` key) of the erasures in one scope. It was one count for the
    tenant: any key's deletion rebuilt every scope's copy on its next read (a 94,000-memory scope's
    recall 38 ms to 1.7 s, after each unrelated delete, a review helper's script)."""
    return f"erasures:{scope_key}"


def read_copy(
    cache: ScopeCache,
    key: str,
    source: Source,
    read: Callable[[ScopeCopy], T],
    renew: Callable[[], Source] | None = None,
) -> T:
    """Bring the copy ``key`` names up to date with every committed write, then read it.

    Under the scope's lock: a refresh grows arrays that a reader would otherwise hold views of.
    The cache is brought back under its limit afterwards. ``renew`` makes the source anew for
    ``freshen`` (when ``source`` keeps what one block read); by default ``source`` serves.
    """
    copy = cache.scope(key, renew or (lambda: source))
    with cache.lock_for(key):
        generation = source.generation()
        if copy.seq and copy.generation != generation:  # rows were erased, or another model's vectors
            copy = cache.fresh()
            cache.replace(key, copy)
        copy.generation = generation
        if _refreshed(copy, source) is None:  # rows arrived out of id order: start over
            copy = cache.fresh()
            copy.generation = generation
            _refreshed(copy, source)
            cache.replace(key, copy)
        answer = read(copy)
    cache.settle(keep=key)
    return answer


def freshen(cache: ScopeCache, limit: int, stop: Callable[[], bool] = lambda: False) -> int:
    """Take committed writes into the ``limit`` most recently used copies now, so that the next
    recall of those scopes does not (the server calls this in the background while no recall
    runs). The recency order is left as it is; a copy that needs a rebuild (rows erased, another
    model's vectors, rows out of id order) is left to its next reader. ``stop`` is asked before
    each scope. Return how many copies took rows in."""
    freshened = 0
    counters: dict[str, int] = {}  # a tenant's change counter, read once a pass (keys are "tenant:scope")
    for key, copy, renew in cache.recent(limit):
        if stop():
            break
        source = renew()
        tenant = key.rpartition(":")[0]
        if tenant not in counters:
            counters[tenant] = source.current_seq()
        with cache.lock_for(key):
            if cache.current(key) is not copy or counters[tenant] <= copy.seq:
                continue  # dropped or replaced meanwhile, or nothing new
            if copy.generation != source.generation():
                continue
            taken = _refreshed(copy, source)
            if taken is None:
                cache.replace(key, cache.fresh())  # half taken in: its next reader loads it whole
        cache.settle(keep=key)
        freshened += bool(taken) and cache.current(key) is copy
    return freshened


def load_written(cache: ScopeCache, limit: int, stop: Callable[[], bool] = lambda: False) -> int:
    """Load the copies of up to ``limit`` scopes written lately and not held, most recent first,
    starting each only while the cache is under 90% of its limit (one larger than what is left
    still pushes the least recently used copies out, as a recall's would). ``stop`` is asked
    before each scope. Return how many were loaded."""
    loaded = 0
    while loaded < limit and not stop() and cache.nbytes < 0.9 * cache.max_bytes:
        taken = cache.take_written()
        if taken is None:
            break
        taken[1]()
        loaded += 1
    return loaded


def _refreshed(copy: ScopeCopy, source: Source) -> int | None:
    """Take the scope's rows changed since the copy's seq in; return how many (None: a row
    arrived out of id order, and the copy must be built anew)."""
    current = source.current_seq()
    if current <= copy.seq:
        return 0
    ids = np.sort(np.asarray(source.changed_ids(copy.seq), dtype=np.int64))
    for start in range(0, len(ids), _PAGE):
        if not copy.apply(source.rows(ids[start : start + _PAGE].tolist())):
            return None
    copy.seq = current
    return len(ids)
