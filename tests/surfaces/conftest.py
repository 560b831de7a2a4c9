"""A live server on SQLite, for tests of the surfaces that do not depend on the backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    """One real server on SQLite (the shape of a surface does not depend on the backend)."""
    settings = Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    yield server
    server.stop()
