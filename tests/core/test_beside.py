"""The helper thread a recall's lexical arm runs on while the model embeds the query (core/beside.py)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

import pytest

from engramdb.core.beside import HELPERS, Beside, beside, model_runs
from engramdb.core.embedding import HashingEmbedder, make_embedder
from engramdb.errors import EmbeddingFailedError

_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")
HELPER = "engram-recall-beside"


def _where() -> tuple[str, str]:
    return _SEEN.get(), threading.current_thread().name


def _started() -> tuple[Beside[tuple[str, str]], threading.Event]:
    """A work that tells when a thread began it."""
    began = threading.Event()

    def work() -> tuple[str, str]:
        began.set()
        return _where()

    return Beside(work), began


@contextlib.contextmanager
def _seen_as(value: str) -> Iterator[None]:
    token = _SEEN.set(value)
    try:
        yield
    finally:
        _SEEN.reset(token)


def test_a_started_work_runs_on_a_helper_in_the_context_it_was_made_in() -> None:
    with _seen_as("the recall's"):
        work, began = _started()
    work.start()
    work.start()  # once: a second start hands nothing more to the helpers
    assert began.wait(30)
    seen, thread = work.result()
    assert seen == "the recall's" and thread.startswith(HELPER)
    plain: list[tuple[str, str]] = []
    other = threading.Thread(target=lambda: plain.append(_where()))
    other.start()
    other.join()
    assert plain[0][0] == "unset"  # control: a thread of its own does not see that context


def test_a_work_no_helper_began_is_run_by_the_caller_in_its_context() -> None:
    with _seen_as("made here"):
        work, began = _started()
    assert not began.wait(0.2)  # never started: nobody runs it
    assert work.result() == ("made here", threading.current_thread().name)


def test_busy_helpers_are_not_waited_for_the_caller_runs_the_work() -> None:
    busy, release = _blocked_helpers()  # every helper holds a blocked work
    try:
        queued = Beside(_where)
        queued.start()
        _, thread = queued.result()  # before the helpers are released: it did not wait for them
    finally:
        release.set()
        for work in busy:
            work.result()
    assert thread == threading.current_thread().name
    freed, began_freed = _started()  # control: with the helpers free, a helper runs it
    freed.start()
    assert began_freed.wait(30) and freed.result()[1].startswith(HELPER)


def test_the_works_error_is_raised_by_result() -> None:
    def fail() -> None:
        raise LookupError("no such scope")

    work = Beside(fail)
    work.start()
    with pytest.raises(LookupError, match="no such scope"):
        work.result()
    assert Beside(lambda: 7).result() == 7  # control: a work that returns


def test_the_model_starts_the_work_set_beside_it_as_it_runs() -> None:
    model = make_embedder("minilm-fast")
    model.embed(["loaded first"])
    work, began = _started()
    with beside(work):
        model.embed(["when is the dentist"])
        assert began.wait(30) and work.result()[1].startswith(HELPER)
    hashed, not_begun = _started()
    with beside(hashed):
        HashingEmbedder().embed(["when is the dentist"])  # no model runs: nothing starts it
        assert not not_begun.wait(0.2)
        assert hashed.result()[1] == threading.current_thread().name  # control: asked for, it runs here
    outside, not_begun_outside = _started()
    model.embed(["a work set beside no block"])  # a model run starts only the work of its block
    model_runs()
    assert not not_begun_outside.wait(0.2)
    assert outside.result()[1] == threading.current_thread().name


def _blocked_helpers() -> tuple[list[Beside[bool]], threading.Event]:
    """Every helper busy with a work that waits until the event is set."""
    release = threading.Event()
    began = threading.Semaphore(0)

    def block() -> bool:
        began.release()
        return release.wait(30)

    blockers = [Beside(block) for _ in range(HELPERS)]
    for blocker in blockers:
        blocker.start()
    for _ in range(HELPERS):
        assert began.acquire(timeout=30)
    return blockers, release


def _drained() -> None:
    """Return once the helpers have finished everything queued before (all meet at one barrier)."""
    barrier = threading.Barrier(HELPERS + 1, timeout=30)
    meeting = [Beside(barrier.wait) for _ in range(HELPERS)]
    for work in meeting:
        work.start()
    barrier.wait()
    for work in meeting:
        work.result()


def _slow(began: threading.Event, done: threading.Event) -> Callable[[], None]:
    def work() -> None:
        began.set()
        threading.Event().wait(0.3)  # reading, in the recall's reading block
        done.set()

    return work


def test_a_block_left_by_an_error_waits_for_the_helper_that_began_the_work() -> None:
    began, done = threading.Event(), threading.Event()
    work = Beside(_slow(began, done))
    with pytest.raises(EmbeddingFailedError), beside(work):
        model_runs()
        assert began.wait(30)
        raise EmbeddingFailedError("the model failed", retryable=True)
    assert done.is_set()  # settled: the block (and the reading block around it) ends after the work
    began_too, done_too = threading.Event(), threading.Event()
    asked = Beside(_slow(began_too, done_too))
    asked.start()
    assert began_too.wait(30) and not done_too.is_set()
    assert asked.result() is None and done_too.is_set()  # control: result() waits for a begun work too


def test_a_block_left_by_an_error_takes_back_a_work_no_helper_began() -> None:
    ran = threading.Event()
    blockers, release = _blocked_helpers()
    try:
        work = Beside(ran.set)
        with pytest.raises(EmbeddingFailedError), beside(work):
            model_runs()  # queued behind the blocked helpers: none has begun it
            raise EmbeddingFailedError("the model failed", retryable=True)
    finally:
        release.set()
        for blocker in blockers:
            blocker.result()
    _drained()  # a helper reached the queued work, and let it be
    assert not ran.is_set()
    kept = Beside(ran.set)
    kept.result()
    assert ran.is_set()  # control: the same work, asked for, runs


def test_a_work_runs_once_whoever_asks_first() -> None:
    runs: list[str] = []
    blockers, release = _blocked_helpers()
    try:
        work = Beside(lambda: runs.append(threading.current_thread().name))
        work.start()  # queued behind the blocked helpers
        work.result()  # taken here first
    finally:
        release.set()
        for blocker in blockers:
            blocker.result()
    _drained()
    assert runs == [threading.current_thread().name]  # the helper that reached it later did not run it again


def test_a_work_a_helper_ran_before_anyone_asked_is_answered_by_result_and_settle() -> None:
    blockers, release = _blocked_helpers()
    try:
        work = Beside(lambda: threading.current_thread().name)
        work.start()  # queued
    finally:
        release.set()
        for blocker in blockers:
            blocker.result()
    _drained()  # a helper claimed it and ran it before anyone asked
    assert work.result().startswith(HELPER)
    work.settle()  # returns: the helper's run is over
