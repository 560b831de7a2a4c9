"""Wrappers that time what recall asks of the store and the embedder (a few µs of cost each).

A :class:`TimedStore` hands out :class:`TimedTenant` proxies: every storage call recall makes
(both candidate arms, the record fetch, the neighbour lookups) writes its wall time, this
thread's CPU time and its row count into the tenant's ``last`` dict; :class:`TimedEmbedder`
does the same for the query embedding. Everything else passes through unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from engramdb.core.embedding import Embedder, FloatMatrix
from engramdb.storage.port import Candidate, CandidateFilter, MemoryRecord, Store, TenantStore, Vector


class Clock:
    """Wall and this-thread CPU time of a block, in ms, written into ``into[name + 'Ms']``.

    Thread CPU time is not inflated by waiting for a core, so on a busy machine it shows the
    intrinsic cost of single-threaded work (the database, Python); it misses BLAS helper threads.
    """

    def __init__(self, into: dict[str, float], name: str) -> None:
        self.into, self.name = into, name
        self.wall = self.cpu = 0.0

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *exc: object) -> None:
        self.into[f"{self.name}Ms"] = (time.perf_counter() - self.wall) * 1000
        self.into[f"{self.name}CpuMs"] = (time.thread_time() - self.cpu) * 1000


class TimedEmbedder:
    """Wraps the query embedder to know the time the embedding took (``embedWrappedMs``)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.last: dict[str, float] = {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        with Clock(self.last, "embedWrapped"):
            return self._inner.embed(texts)


class TimedTenant:
    """Wraps a tenant store to time the storage calls recall makes."""

    def __init__(self, inner: TenantStore) -> None:
        self._inner = inner
        self.last: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @contextmanager
    def reading(self) -> Iterator[TimedTenant]:
        self.last["neighboursMs"] = 0.0  # one recall asks for neighbours once or twice
        with self._inner.reading():  # recall reads through this wrapper, not the store it yields
            yield self

    def adjacent(self, scope_key: str, rowids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        started = time.perf_counter()
        result = self._inner.adjacent(scope_key, rowids)
        self.last["neighboursMs"] = self.last.get("neighboursMs", 0.0) + (time.perf_counter() - started) * 1000
        return result

    def vector_candidates(self, scope_key: str, query: Vector, filt: CandidateFilter, limit: int) -> list[Candidate]:
        with Clock(self.last, "dense"):
            result = self._inner.vector_candidates(scope_key, query, filt, limit)
        self.last["denseHits"] = len(result)
        return result

    def text_candidates(
        self, scope_key: str, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> list[Candidate]:
        with Clock(self.last, "lexical"):
            result = self._inner.text_candidates(scope_key, terms, filt, limit)
        self.last["lexicalHits"] = len(result)
        return result

    def candidates(
        self, scope_key: str, query: Vector, terms: Sequence[str], filt: CandidateFilter, limit: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """One arm after the other (the port's meaning of ``candidates``), each arm timed."""
        return (
            self.vector_candidates(scope_key, query, filt, limit),
            self.text_candidates(scope_key, terms, filt, limit),
        )

    def records(self, rowids: Sequence[int], *, with_event: bool = True) -> dict[int, MemoryRecord]:
        with Clock(self.last, "records"):
            result = self._inner.records(rowids, with_event=with_event)
        self.last["records"] = len(result)
        return result


class TimedStore:
    """A store whose tenants are :class:`TimedTenant` proxies (one per name, kept)."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self._tenants: dict[str, TimedTenant] = {}

    def timed_tenant(self, name: str) -> TimedTenant:
        """Return the tenant's proxy, to read the timings of its last calls."""
        if name not in self._tenants:
            self._tenants[name] = TimedTenant(self._inner.tenant(name))
        return self._tenants[name]

    def tenant(self, name: str, *, create: bool = False) -> TenantStore:
        if create:
            self._inner.tenant(name, create=True)
        # A proxy: what it does not time, it forwards to the real tenant store.
        return self.timed_tenant(name)

    def tenant_names(self) -> list[str]:
        return self._inner.tenant_names()

    def maintain(self) -> None:
        self._inner.maintain()

    def backup(self, dest: Path, *, pg_bin: str | None = None) -> None:
        self._inner.backup(dest, pg_bin=pg_bin)

    def warm(self, stop: Callable[[], bool] = lambda: False, vector_model: str | None = None) -> list[tuple[str, str]]:
        return self._inner.warm(stop, vector_model)

    def freshen(self, stop: Callable[[], bool] = lambda: False) -> int:
        return self._inner.freshen(stop)

    def close(self) -> None:
        self._inner.close()
