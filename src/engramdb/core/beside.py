"""Work a recall does beside its query's embedding, on a helper thread while the model runs.

Embedding the question is most of a recall's time, and the local model runs without Python's lock
(onnxruntime releases it). What needs no vector (the lexical arm, the words' counts) can run then
on a helper thread. Only then: the embedder's own Python (the tokenizer, the arrays) releases the
lock too, and a helper that took it there makes the recall's thread wait for the helper's whole
part before the model even starts. So the local embedder calls ``model_runs()`` just before its
model runs, and that starts the work the recall set ``beside`` it. A remote embedder does not: the
work would hold a PostgreSQL reading block's connection through a network wait.

The helper runs the work in the recall's context (its reading block, its trace), so its reads see
what the recall's own reads see; and no helper runs it once the recall's ``beside`` block is left,
however (it settles the work). A work no helper began (no model ran: a cached, a hashing or a remote
embedder) or that waits behind other recalls' work is run by the recall's thread when it asks.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

# As many as the recalls that embed at once (the REST lane lets one per core run); past them a
# recall runs its part itself rather than queue it behind another recall's.
HELPERS = max(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 2)

_made = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_WAITING: contextvars.ContextVar[Beside[object] | None] = contextvars.ContextVar("engram_beside", default=None)


def _forget_in_child() -> None:
    """A forked child has none of its parent's threads, nor may it wait on the parent's lock."""
    global _pool, _made
    _pool, _made = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def _helpers() -> ThreadPoolExecutor:
    global _pool
    with _made:
        if _pool is None:
            _pool = ThreadPoolExecutor(HELPERS, thread_name_prefix="engram-recall-beside")
        return _pool


class Beside(Generic[T]):
    """``work``, run once in the context it was made in: by a helper once ``start()`` is called,
    or by ``result()`` itself if no helper has begun it by then (whoever claims it first)."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._context = contextvars.copy_context()
        self._claim = threading.Lock()
        self._owner: str | None = None  # "helper" or "caller", once claimed
        self._submitted = False
        self._done = threading.Event()  # the helper's run ended
        self._value: T | None = None
        self._error: BaseException | None = None

    def _take(self, owner: str) -> bool:
        """Whether ``owner`` is the one to run the work (the first to ask)."""
        with self._claim:
            if self._owner is not None:
                return False
            self._owner = owner
            return True

    def _on_helper(self) -> None:
        if not self._take("helper"):
            return
        try:
            self._value = self._context.run(self._work)
        except BaseException as error:  # handed to result(), on the caller's thread
            self._error = error
        finally:
            self._done.set()

    def start(self) -> None:
        """Hand the work to a helper (once; a later call does nothing)."""
        if self._submitted or self._owner is not None:
            return
        self._submitted = True
        try:
            _helpers().submit(self._on_helper)
        except RuntimeError:  # no new thread (shutting down): queued or not, whoever claims it runs it
            pass

    def result(self) -> T:
        """The work's result (or its exception), run here if no helper has begun it."""
        if self._take("caller"):
            return self._context.run(self._work)
        if self._owner != "helper":
            raise RuntimeError("the work was settled: it has no result")
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def settle(self) -> None:
        """No helper runs the work past this call: it is taken back if none began it, else waited
        for (the caller's reading block, which its reads use, may end next). Its answer is dropped."""
        if not self._take("caller") and self._owner == "helper":
            self._done.wait()


@contextmanager
def beside(work: Beside[T] | None) -> Iterator[None]:
    """Within the block, the next model run (``model_runs()``) starts ``work`` on a helper; the
    block's end settles it, however it ends (None: no work)."""
    if work is None:
        yield
        return
    token = _WAITING.set(work)  # type: ignore[arg-type]
    try:
        yield
    finally:
        _WAITING.reset(token)
        work.settle()


def model_runs() -> None:
    """The local model is about to run without Python's lock: start the work set beside it."""
    work = _WAITING.get()
    if work is not None:
        work.start()
