"""``/readyz`` says ready only after the warm-up: the model loaded and the scopes recall used
last back in memory; ``/healthz`` answers all along. A real server over loopback, both backends."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

SCOPE = scope_fields()


class GatedEmbedder(HashingEmbedder):
    """The hashing embedder, whose first call (the server's warm-up) waits for ``gate``."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self._first = True

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if self._first:
            self._first = False
            assert self.gate.wait(20), "the test never opened the gate"
        return super().embed(texts)


def _open(backend: str, where: Path, request: pytest.FixtureRequest) -> Store:
    if backend == "sqlite":
        return SQLiteStore(where)
    from engramdb.storage.postgres.store import PostgresStore

    schema = f"t_{where.name}"
    return PostgresStore(request.getfixturevalue("pg_url"), schema=schema, copy_min_rows=5)


def _used_scope(store: Store, settings: Settings) -> None:
    """Write a scope of twenty episodes and recall from it (which loads its copy)."""
    service = MemoryService(store, HashingEmbedder(), settings)
    store.tenant("t1", create=True)
    caller = Caller("t1", "test", "admin")
    service.writes.write_episodes(
        caller,
        [
            EpisodeWrite.model_validate(episode_body(f"kafka deploy number {i}", "", session="s", turn=i, scope=SCOPE))
            for i in range(20)
        ],
    )
    drain(store.tenant("t1"), service.shared.embedder)
    for _ in range(2):  # PostgreSQL: the first recall finds the scope large, the second copies it
        service.reads.recall(caller, RecallRequest.model_validate({"query": "kafka", "scope": SCOPE}))


def test_ready_only_after_the_model_and_recent_scopes_are_warm(
    backend: str, tmp_path: Path, settings: Settings, request: pytest.FixtureRequest
) -> None:
    where = tmp_path / f"s{uuid.uuid4().hex[:8]}"
    before = _open(backend, where, request)
    _used_scope(before, settings)
    key = auth.scope_key(Scope.model_validate(SCOPE))
    assert [k.endswith(key) for k, _ in before.scope_copies.held()] == [True]  # type: ignore[attr-defined]
    before.close()  # a restart: the next store starts with nothing in memory

    store = _open(backend, where, request)
    embedder = GatedEmbedder()
    server = LiveServer(settings, store, embedder)
    server.start()
    try:
        with server.client(None) as http:
            assert http.get("/healthz").status_code == 200  # alive while warming
            warming = http.get("/readyz")
            assert warming.status_code == 503 and warming.json()["status"] == "warming"
            assert store.scope_copies.held() == []  # type: ignore[attr-defined]  # nothing loaded yet
            embedder.gate.set()
            deadline = time.monotonic() + 20
            while (ready := http.get("/readyz")).status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.02)
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "ready" and ready.json()["scopesWarmed"] == 1
        held = store.scope_copies.held()  # type: ignore[attr-defined]
        assert [(k.endswith(key), rows) for k, rows in held] == [(True, 20)]  # warm before ready
    finally:
        embedder.gate.set()
        server.stop()


_FREEZE = r"""
import gc, sys, tempfile
from pathlib import Path
from engramdb.api.readiness import Readiness
from engramdb.config import RetrievalSettings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
readiness = Readiness(SQLiteStore(Path(tempfile.mkdtemp())), HashingEmbedder(), RetrievalSettings(),
                      freeze_after=sys.argv[1] == "yes")
readiness.start()
readiness._done.wait(30)
print(gc.get_freeze_count())
"""


@pytest.mark.parametrize("owned", ["yes", "no"])
def test_a_server_in_its_own_process_freezes_what_its_warm_up_loaded(owned: str, tmp_path: Path) -> None:
    """`engram serve` (its own process): after the warm-up, what is loaded stays out of later
    garbage collections. An app inside another process (these tests) leaves the collector alone."""
    import subprocess
    import sys

    folders = {**os.environ, "TMPDIR": str(tmp_path)}  # its data folder is this test's
    done = subprocess.run(
        [sys.executable, "-c", _FREEZE, owned], capture_output=True, text=True, check=True, env=folders
    )
    frozen = int(done.stdout.split()[-1])
    assert frozen > 1000 if owned == "yes" else frozen == 0


@pytest.mark.parametrize("model", ["the server's", None])
def test_warmed_copies_hold_the_servers_model_so_the_first_recall_keeps_them(
    backend: str, tmp_path: Path, settings: Settings, request: pytest.FixtureRequest, model: str | None
) -> None:
    """Copies hold one model's vectors. Warmed without the server's model, every warmed scope was
    rebuilt by its first recall (55 ms at a million memories over 1,000 scopes): the warm-up was lost."""
    where = tmp_path / f"s{uuid.uuid4().hex[:8]}"
    before = _open(backend, where, request)
    _used_scope(before, settings)
    before.close()
    store = _open(backend, where, request)
    embedder = HashingEmbedder()
    [(tenant, key)] = store.warm(vector_model=embedder.model_id if model else None)
    copies = store.scope_copies._scopes  # type: ignore[attr-defined]  # the backend's own cache
    [warmed] = [copy for k, copy in copies.items() if k.endswith(key)]
    service = MemoryService(store, embedder, settings)
    asked = RecallRequest.model_validate({"query": "kafka", "scope": SCOPE})
    found = service.reads.recall(Caller(tenant, "test", "admin"), asked)
    assert found.memories  # the recall read the scope
    [now] = [copy for k, copy in copies.items() if k.endswith(key)]
    assert (now is warmed) == (model is not None)  # kept when warmed with the model; rebuilt without it
    store.close()
