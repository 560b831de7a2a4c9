"""Work a recall does beside its query's embedding, on a helper thread while the model runs.

Embedding the question is most of a recall's time, and the local model runs without Python's lock
(onnxruntime releases it). What needs no vector (the lexical arm, the words' counts) can run then
on a helper thread. Only then: the embedder's own Python (the tokenizer, the arrays) releases the
lock too, and a helper that took it there makes the recall's thread wait for the helper's whole
part before the model even starts. So the local embedder calls ``model_runs()`` just before its
model runs, and that starts the work the recall set ``beside`` it. A remote embedder does not: the
work would hold a PostgreSQL reading block's connection through a network wait.

The helper runs the work in the recall's context (its reading block, its trace), so its reads see
what the recall's own reads see; and no helper runs it once the block is left (``beside`` settles
it when the embedding fails). A work no helper began (no model ran: a cached, a hashing or a remote
embedder) or that waits behind other recalls' work is run by the recall's thread when it asks.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")

# As many as the recalls that embed at once (the REST lane lets one per core run); past them a
# recall runs its part itself rather than queue it behind another recall's.
HELPERS = max(2, os.cpu_count() or 2)

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
    or by ``result()`` itself if no helper has begun it by then."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._context = contextvars.copy_context()
        self._future: Future[T | None] | None = None
        self._claim = threading.Lock()
        self._claimed = False

    def _take(self) -> bool:
        """Whether this caller is the one to run the work (the first to ask)."""
        with self._claim:
            taken, self._claimed = not self._claimed, True
            return taken

    def _on_helper(self) -> T | None:
        return self._context.run(self._work) if self._take() else None

    def start(self) -> None:
        """Hand the work to a helper (once; a later call does nothing)."""
        if self._future is not None or self._claimed:
            return
        try:
            self._future = _helpers().submit(self._on_helper)
        except RuntimeError:  # the interpreter is shutting down (no new work): result() runs it
            pass

    def result(self) -> T:
        """The work's result (or its exception), run here if no helper has begun it."""
        if self._take():
            return self._context.run(self._work)
        assert self._future is not None  # taken by a helper, which only start() hands it to
        return self._future.result()  # type: ignore[return-value]

    def settle(self) -> None:
        """No helper runs the work past this call: it is taken back if none began it, else waited
        for (the caller's reading block, which its reads use, may end next). Its answer is dropped."""
        if not self._take() and self._future is not None:
            wait([self._future])


@contextmanager
def beside(work: Beside[T]) -> Iterator[Beside[T]]:
    """Within the block, the next model run (``model_runs()``) starts ``work`` on a helper; a block
    left by an error settles it."""
    token = _WAITING.set(work)  # type: ignore[arg-type]
    try:
        yield work
    except BaseException:
        work.settle()
        raise
    finally:
        _WAITING.reset(token)


def model_runs() -> None:
    """The local model is about to run without Python's lock: start the work set beside it."""
    work = _WAITING.get()
    if work is not None:
        work.start()
