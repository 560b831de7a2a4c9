"""Shared fixtures: real SQLite files under tmp_path, a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import scope_fields


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)


@pytest.fixture
def store(settings: Settings) -> Iterator[SQLiteStore]:
    s = SQLiteStore(settings.home)
    yield s
    s.close()


@pytest.fixture
def service(store: SQLiteStore, settings: Settings) -> MemoryService:
    return MemoryService(store, HashingEmbedder(), settings)


@pytest.fixture
def operator(store: SQLiteStore) -> Caller:
    """The local operator: admin of tenant 't1' (created here), no scope bound."""
    store.tenant("t1", create=True)
    return Caller(tenant="t1", key_id="test-operator", role="admin")


class LiveServer:
    """A uvicorn server in a thread, serving the real app over loopback HTTP."""

    def __init__(self, settings: Settings, store: SQLiteStore, embedder: Any) -> None:
        from engramdb.api.rest import create_app

        self.store = store
        self.app = create_app(settings, store=store, embedder=embedder)
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]})

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()

    def key(self, tenant: str = "t1", role: str = "agent", **grant: Any) -> str:
        """Create a key directly in the store (as the operator would with the CLI)."""
        if role == "agent" and not grant:
            grant = scope_fields()
        token, _ = auth.create_key(self.store, tenant=tenant, role=role, grant=grant)
        return token

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture
def server(settings: Settings) -> Iterator[LiveServer]:
    store = SQLiteStore(settings.home)
    live = LiveServer(settings, store, HashingEmbedder())
    live.start()
    yield live
    live.stop()
