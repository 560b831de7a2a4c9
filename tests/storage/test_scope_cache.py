"""The scope copies' cache keeps nothing per scope beyond its memory limit: a copy of an empty scope
counts its overhead against the limit, and a scope's lock lives only while a reader holds it. A key
that reads a million distinct scopes once grew the process by about 6 KB a scope, without bound, and
made every later recall slower (bench/RESULTS.md, session 30)."""

from __future__ import annotations

import gc
import threading
import weakref

from engramdb.storage.scope_cache import COPY_OVERHEAD, ScopeCache, Source, read_copy

EMPTY = Source(current_seq=lambda: 0, changed_ids=lambda seq: [], rows=lambda ids: [])


def _read_all(cache: ScopeCache, scopes: int) -> None:
    for i in range(scopes):
        read_copy(cache, f"t1:scope-{i}", EMPTY, len)


def test_copies_of_empty_scopes_are_bounded_by_the_memory_limit() -> None:
    bounded = ScopeCache(max_bytes=COPY_OVERHEAD * 10)
    _read_all(bounded, 100)
    held = bounded.held()
    assert len(held) == 10 and held[0][0] == "t1:scope-99"  # the most recent ten
    assert bounded.nbytes <= bounded.max_bytes
    roomy = ScopeCache()  # positive control: the default limit holds all of them
    _read_all(roomy, 100)
    assert len(roomy.held()) == 100
    assert [key for key, _ in roomy.held(3)] == ["t1:scope-99", "t1:scope-98", "t1:scope-97"]


def test_a_scope_lock_lives_while_a_reader_holds_it() -> None:
    cache = ScopeCache()
    _read_all(cache, 50)
    held = cache.lock_for("t1:scope-7")
    assert cache.lock_for("t1:scope-7") is held  # control: one lock per scope while held
    inside, seen = threading.Event(), []

    def other() -> None:
        with cache.lock_for("t1:scope-8") as lock:
            seen.append(weakref.ref(lock))  # only the ``with`` block holds it
            inside.set()
            release.wait(5)

    release = threading.Event()
    worker = threading.Thread(target=other)
    worker.start()
    assert inside.wait(5)
    assert cache.lock_for("t1:scope-8") is seen[0]()  # a reader's lock is the one the next one waits on
    release.set()
    worker.join(5)
    gone = weakref.ref(held)
    del held
    gc.collect()
    assert gone() is None  # nobody holds it, so the cache does not keep it
    with cache.lock_for("t1:scope-7"):  # and a new one serves the next reader
        pass
