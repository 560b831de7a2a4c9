"""Recall first: a queued model job waits between its steps while the server answers a recall
(core/foreground.py), holds no lock while it waits, and goes on once the recall is answered."""

from __future__ import annotations

import struct
import threading
import time
from pathlib import Path
from typing import Any

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.foreground import QUIET_SECONDS, Foreground
from engramdb.core.service import MemoryService
from engramdb.jobs.extraction import drain
from engramdb.models.assist import ExtractRequest
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.assist.conftest import llm_settings
from tests.assist.helpers import fact, stated
from tests.sdk.chat_server import ScriptedChat

LISBON = "The user lives in Lisbon."


def test_the_count_is_shared_through_the_file(tmp_path: Path) -> None:
    """Two objects on one file stand for the server and its worker process."""
    path = tmp_path / "run" / "recalls-in-flight"
    server, worker = Foreground(path), Foreground(path)
    try:
        assert not worker.busy() and worker.wait_for_recalls(5.0) == 0.0
        with server.recalling():
            with server.recalling():
                assert worker.busy()
            assert worker.busy()  # one of the two still in flight
        assert worker.busy()  # just ended: the next recall of a loop is likely on its way
        time.sleep(2 * QUIET_SECONDS)
        assert not worker.busy()  # positive control above: the same query answers both ways
        # Waiting ends when the recall does, not at the bound.
        release = threading.Timer(0.2, lambda: server._add(-1))
        server._add(1)
        release.start()
        waited = worker.wait_for_recalls(10.0)
        assert 0.1 < waited < 5.0 and not worker.busy()
        # ... and at the bound when the recall goes on.
        with server.recalling():
            assert 0.05 <= worker.wait_for_recalls(0.05) < 1.0
    finally:
        server.close()
        worker.close()


def test_a_count_left_by_a_dead_server_is_stale_and_reset_at_start(tmp_path: Path) -> None:
    path = tmp_path / "recalls-in-flight"
    left = Foreground(path)
    with left.recalling():
        assert left.busy()
        path.write_bytes(struct.pack("<qd", 1, time.time() - 60))  # in flight for a minute: its server died
        assert not left.busy()
        path.write_bytes(struct.pack("<qd", 1, time.time()))
        assert left.busy()  # control: the same count, fresh
        restarted = Foreground(path)
        restarted.reset()
        time.sleep(2 * QUIET_SECONDS)
        assert not left.busy()
        restarted.close()
    left.close()


class _Watching(HashingEmbedder):
    """The hashing embedder, noting whether a recall was counted in flight when it embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[bool] = []
        self.foreground: Foreground | None = None

    def embed(self, texts: Any) -> Any:
        if self.foreground is not None:
            self.seen.append(self.foreground.busy())
        return super().embed(texts)


def test_a_recall_is_counted_while_it_runs(store: Store, tmp_path: Path, agent: Caller) -> None:
    store.tenant("t1", create=True)
    embedder = _Watching()
    service = MemoryService(store, embedder, llm_settings(tmp_path, "http://127.0.0.1:9/v1"))
    embedder.foreground = service.foreground
    service.recall(agent, RecallRequest.model_validate({"query": "where does the user live?"}))
    time.sleep(2 * QUIET_SECONDS)
    assert embedder.seen == [True] and not service.foreground.busy()  # counted during, not after
    stated(service, agent, LISBON)  # control: a write's embedding (if any here) is not a recall's
    assert embedder.seen[1:] in ([], [False])


def test_a_queued_job_waits_while_a_recall_runs_and_holds_no_lock(
    store: Store, tmp_path: Path, agent: Caller
) -> None:
    brain = Brain(facts=[fact("user", "location", LISBON)])
    chat = ScriptedChat(brain)
    try:
        store.tenant("t1", create=True)
        settings = llm_settings(tmp_path, chat.url, recall_first_ms=10_000)
        service = MemoryService(store, HashingEmbedder(), settings)
        job = service.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
        with service.foreground.recalling():  # a recall that takes as long as this block
            runner = threading.Thread(target=drain, args=(service, "t1"))
            runner.start()
            runner.join(1.0)
            assert runner.is_alive()  # waiting at a step, not finished
            assert len(brain.asked("extract")) == 1  # it got as far as the model's answer
            started = time.monotonic()
            stated(service, agent, "The user likes jazz.", kind="likes")  # the job holds no lock
            assert time.monotonic() - started < 5.0
        runner.join(30.0)
        assert not runner.is_alive()
        assert service.get_model_job(agent, job.job_id).state == "done"
        # Control: with no recall in flight, the next job runs straight through.
        other = service.queue_extraction(agent, ExtractRequest.model_validate({"text": "The user likes chess."}))
        started = time.monotonic()
        assert drain(service, "t1") == 1 and time.monotonic() - started < 5.0
        assert service.get_model_job(agent, other.job_id).state == "done"
    finally:
        chat.close()
