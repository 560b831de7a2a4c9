"""Recall first: a queued model job waits between its steps while the server answers a recall
(core/foreground.py), holds no lock while it waits, and goes on once the recall is answered."""

from __future__ import annotations

import os
import struct
import threading
import time
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.foreground import QUIET_SECONDS, Foreground
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain as drain_embeddings
from engramdb.jobs.extraction import drain
from engramdb.models.assist import ExtractRequest
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.assist.conftest import llm_settings
from tests.assist.helpers import fact, stated
from tests.conftest import LiveServer
from tests.sdk.chat_server import ScriptedChat

LISBON = "The user lives in Lisbon."


def test_the_count_is_shared_through_the_file(tmp_path: Path) -> None:
    """Two objects on one file stand for the server and its worker process."""
    path = tmp_path / "run" / "recalls-in-flight"
    server, worker = Foreground(path, quiet_seconds=0.5), Foreground(path, quiet_seconds=0.5)
    try:
        assert not worker.busy() and worker.wait_for_recalls(5.0) == 0.0
        with server.recalling():
            with server.recalling():
                assert worker.busy()
            assert worker.busy()  # one of the two still in flight
        assert worker.busy()  # just ended: the next recall of a loop is likely on its way
        time.sleep(0.6)
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


def test_while_recalls_never_stop_one_step_of_the_process_passes_per_bound(tmp_path: Path) -> None:
    server, worker = Foreground(tmp_path / "count"), Foreground(tmp_path / "count")
    finished: list[float] = []
    started = time.monotonic()

    def step() -> None:
        worker.wait_for_recalls(0.2)
        finished.append(time.monotonic() - started)

    with server.recalling():
        threads = [threading.Thread(target=step) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert len(finished) == 3 and finished[0] >= 0.19  # each went on at its bound, not before,
    assert max(finished) >= 0.55  # one after another: three steps took three bounds
    assert worker.wait_for_recalls(0.2) < 0.2  # control: the recall over, a step goes on at once
    server.close()
    worker.close()


def test_a_count_left_by_a_dead_server_is_stale_and_reset_at_start(tmp_path: Path) -> None:
    path = tmp_path / "recalls-in-flight"
    left = Foreground(path)

    def stamp(count: int, at: float) -> None:  # written in place: the file stays mapped
        with path.open("r+b") as file:
            os.pwrite(file.fileno(), struct.pack("<qd", count, at), 0)

    with left.recalling():
        assert left.busy()
        stamp(1, time.monotonic() - 60)  # in flight for a minute: its server died
        assert not left.busy()
        stamp(1, time.monotonic() + 3600)  # from before the machine started (its clock was ahead)
        assert not left.busy()
        stamp(1, time.monotonic())
        assert left.busy()  # control: the same count, fresh
        restarted = Foreground(path)
        restarted.reset()
        time.sleep(2 * QUIET_SECONDS)
        assert not left.busy()
        restarted.close()
    left.close()


def test_a_file_that_cannot_be_made_leaves_the_count_to_this_process(tmp_path: Path) -> None:
    blocker = tmp_path / "run"
    blocker.write_text("a file where the folder should be")
    alone = Foreground.shared(blocker / "recalls-in-flight")
    with alone.recalling():
        assert alone.busy() and alone.here()  # still counted, in this process
    shared = Foreground.shared(tmp_path / "ok" / "recalls-in-flight")  # control: a folder that can be made
    assert (tmp_path / "ok" / "recalls-in-flight").stat().st_size == 16
    shared.close()


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
    embedder.foreground = service.shared.foreground
    service.reads.recall(agent, RecallRequest.model_validate({"query": "where does the user live?"}))
    time.sleep(2 * QUIET_SECONDS)
    assert embedder.seen == [True] and not service.shared.foreground.busy()  # counted during, not after
    stated(service, agent, LISBON)
    drain_embeddings(store.tenant("t1"), embedder)  # control: a write's embedding is not a recall's
    assert embedder.seen[1:] == [False]


def test_a_queued_job_waits_while_a_recall_runs_and_holds_no_lock(store: Store, tmp_path: Path, agent: Caller) -> None:
    brain = Brain(facts=[fact("user", "location", LISBON)])
    chat = ScriptedChat(brain)
    try:
        store.tenant("t1", create=True)
        settings = llm_settings(tmp_path, chat.url, recall_first_ms=10_000)
        service = MemoryService(store, HashingEmbedder(), settings)
        job = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": LISBON}))
        with service.shared.foreground.recalling():  # a recall that takes as long as this block
            runner = threading.Thread(target=drain, args=(service, "t1"))
            runner.start()
            deadline = time.monotonic() + 10
            while not brain.asked("extract") and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(brain.asked("extract")) == 1  # it got as far as the model's answer,
            time.sleep(0.3)
            assert runner.is_alive()  # and waits there
            started = time.monotonic()
            stated(service, agent, "The user likes jazz.", kind="likes")  # the job holds no lock
            assert time.monotonic() - started < 5.0
        runner.join(30.0)
        assert not runner.is_alive()
        assert service.assist.get_assist_job(agent, job.job_id).state == "done"
        # Control: with no recall in flight, the next job runs straight through.
        other = service.assist.queue_extraction(agent, ExtractRequest.model_validate({"text": "The user likes chess."}))
        started = time.monotonic()
        assert drain(service, "t1") == 1 and time.monotonic() - started < 5.0
        assert service.assist.get_assist_job(agent, other.job_id).state == "done"
    finally:
        chat.close()


def test_a_server_with_a_model_shares_its_count_and_one_without_keeps_it(
    store: Store, tmp_path: Path, settings: Settings, live: LiveServer
) -> None:
    shared = settings.recalls_file()
    assert shared.stat().st_size == 16  # made by the server's start: a worker process reads it
    with live.client(live.key()) as http:
        assert http.post("/v1/recall", json={"query": "where does the user live?"}).status_code == 200
    plain = Settings(home=tmp_path / "plain", embedder="hashing")  # control: no model, no worker, no file
    server = LiveServer(plain, store, HashingEmbedder())
    server.start()
    try:
        with server.client(server.key()) as http:
            assert http.post("/v1/recall", json={"query": "where does the user live?"}).status_code == 200
        assert not plain.recalls_file().exists()
    finally:
        server.stop()
