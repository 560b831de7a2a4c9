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

from engramdb.api.rest import cores, recall_lane
from engramdb.config import Settings
from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.core.embedding_openai import OpenAICompatibleEmbedder
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
            lane_state = server.app.state.recall_lane
            _until(lambda: lane_state.statistics().tasks_waiting == RECALLS - lane, "the rest waiting their turn")
            _until(lambda: embedder.held == lane, "the lane's threads each holding a question")
            written = http.post("/v1/episodes", json=episode_body("served while recalls are held"), timeout=5)
            assert written.status_code == 201, written.text  # not queued behind the held recalls
            embedder.release.set()
            answers = [a.result(timeout=30) for a in asked]
        assert [a.status_code for a in answers] == [200] * RECALLS, [a.text for a in answers]
        assert embedder.most_held == lane
    finally:
        embedder.release.set()
        server.stop()


def test_by_default_the_lane_is_one_thread_per_core_and_a_remote_embedders_recalls_keep_the_pool(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path / "home", embedder="hashing")
    local = recall_lane(settings, HashingEmbedder())
    assert local is not None and local.total_tokens == cores()
    remote = OpenAICompatibleEmbedder("http://127.0.0.1:9", "model")  # never reached: nothing is embedded
    assert recall_lane(settings, remote) is None  # its recalls wait on the network, and their waits overlap
    chosen = recall_lane(settings.model_copy(update={"recall_threads": 7}), remote)  # control: a setting is taken
    assert chosen is not None and chosen.total_tokens == 7


def test_the_cores_are_capped_by_a_containers_cpu_quota(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    affinity = len(os.sched_getaffinity(0))
    assert cores(cpu_max) == affinity  # no file: no quota
    cpu_max.write_text("max 100000\n")
    assert cores(cpu_max) == affinity
    cpu_max.write_text("50000 100000\n")  # half a core still runs one recall
    assert cores(cpu_max) == 1
    cpu_max.write_text(f"{(affinity + 4) * 100000} 100000\n")  # a quota above the affinity does not raise it
    assert cores(cpu_max) == affinity
