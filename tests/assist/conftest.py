"""Fixtures for model-assisted memory: a scripted model over real HTTP, a service and a live
server configured with it, on both backends (tests/conftest.py's ``store``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engramdb.config import LLMSettings, Settings
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.port import Store
from tests.assist.brain import Brain
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.sdk.chat_server import ScriptedChat


@pytest.fixture
def brain() -> Brain:
    return Brain()


@pytest.fixture
def chat(brain: Brain) -> Iterator[ScriptedChat]:
    server = ScriptedChat(brain)
    yield server
    server.close()


def llm_settings(home: Path, url: str, **llm: Any) -> Settings:
    options: dict[str, Any] = {
        "base_url": url,
        "model": "scripted",
        "timeout_seconds": 5.0,
        "workers": 2,
        "worker_process": False,
        **llm,
    }  # threads: the test's own store object
    return Settings(home=home, embedder="hashing", embed_poll_seconds=0.05, llm=LLMSettings(**options))


@pytest.fixture
def settings(tmp_path: Path, chat: ScriptedChat) -> Settings:
    """tests/conftest.py's settings, with the scripted model configured."""
    return llm_settings(tmp_path / "home", chat.url)


@pytest.fixture
def service(store: Store, settings: Settings) -> MemoryService:
    store.tenant("t1", create=True)
    return MemoryService(store, HashingEmbedder(), settings)


@pytest.fixture
def scope() -> dict[str, Any]:
    return scope_fields()


@pytest.fixture
def agent(scope: dict[str, Any]) -> Caller:
    """An agent key of tenant t1, bound to ``scope``."""
    return Caller(tenant="t1", key_id="agent-key", role="agent", grant=scope)


@pytest.fixture
def reviewer() -> Caller:
    return Caller(tenant="t1", key_id="reviewer-key", role="reviewer")


@pytest.fixture
def live(settings: Settings, store: Store) -> Iterator[LiveServer]:
    server = LiveServer(settings, store, HashingEmbedder())
    server.start()
    yield server
    server.stop()
