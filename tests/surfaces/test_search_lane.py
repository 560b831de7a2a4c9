"""Recalls run in a lane of ``recall_threads`` worker threads: past it they wait their turn, and a
write is served meanwhile. A real server over loopback; the embedder holds every recall's question
until the test lets it go, so what runs at once is counted, not timed."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

RECALLS = 5
QUESTION = "lane probe"


class HeldQuestions(HashingEmbedder):
    """The hashing embedder, holding each recall's question until ``release`` is set; it counts
    how many questions are held at once (the written episodes pass through unheld)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.held = self.most_held = 0
        self._count = threading.Lock()

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if any(t.startswith(QUESTION) for t in texts):
            with self._count:
                self.held += 1
                self.most_held = max(self.most_held, self.held)
            try:
                assert self.release.wait(20), "the test never released the questions"
            finally:
                with self._count:
                    self.held -= 1
        return super().embed(texts)


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("lane", [2, RECALLS])  # a lane as wide as the recalls: all run at once
def test_past_its_lane_a_recall_waits_its_turn_and_a_write_is_served_meanwhile(tmp_path: Path, lane: int) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing", recall_threads=lane)
    embedder = HeldQuestions()
    server = LiveServer(settings, SQLiteStore(settings.home), embedder)
    server.start()
    try:
        token = server.key()
        with server.client(token) as http, ThreadPoolExecutor(RECALLS) as pool:
            body = {"scope": scope_fields(), "limit": 3}
            asked = [
                pool.submit(http.post, "/v1/recall", json={**body, "query": f"{QUESTION} {n}"}) for n in range(RECALLS)
            ]
            lane_state = server.app.state.search_lane
            _until(lambda: lane_state.statistics().tasks_waiting == RECALLS - lane, "the rest waiting their turn")
            _until(lambda: embedder.held == lane, "the lane's threads each holding a question")
            written = http.post("/v1/episodes", json=episode_body("served while recalls are held"))
            assert written.status_code == 201, written.text  # not queued behind the held recalls
            embedder.release.set()
            answers = [a.result(timeout=30) for a in asked]
        assert [a.status_code for a in answers] == [200] * RECALLS, [a.text for a in answers]
        assert embedder.most_held == lane
    finally:
        embedder.release.set()
        server.stop()


def test_by_default_the_lane_is_one_thread_per_core_the_process_may_use(tmp_path: Path) -> None:
    from engramdb.api.rest import create_app

    cores = len(os.sched_getaffinity(0))
    for threads, width in ((0, cores), (cores + 3, cores + 3)):  # control: a setting is taken as given
        settings = Settings(home=tmp_path / f"home{threads}", embedder="hashing", recall_threads=threads)
        store = SQLiteStore(settings.home)
        try:
            app = create_app(settings, store=store, embedder=HashingEmbedder())
            assert app.state.search_lane.total_tokens == width
        finally:
            store.close()
