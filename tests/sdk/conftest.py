"""Fixtures for the SDK tests: the real server (tests/conftest.py), keys, proxies, sessions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.sdk.host import HostContext
from engramdb.sdk.outbox import OutboxSettings
from engramdb.sdk.session import MemorySession
from engramdb.storage.port import Store
from tests.conftest import LiveServer
from tests.factories import scope_fields
from tests.sdk.helpers import BlackHole, FaultProxy, LateServer, dead_url, host_for, with_nodelay

# Quick retries for the tests; test_outbox checks the reference numbers themselves.
FAST = OutboxSettings(backoff_base=0.01, rest_seconds=0.2, request_timeout=5.0)


@pytest.fixture
def backend() -> str:
    """The SDK speaks HTTP: one backend behind the server is enough here (tests/contract and
    tests/surfaces hold the backends to the same behaviour). Row counts read its SQLite file."""
    return "sqlite"


@pytest.fixture
def server(settings: Settings, store: Store) -> Iterator[LiveServer]:
    """tests/conftest.py's live server, with TCP_NODELAY on its connections (see with_nodelay)."""
    live = with_nodelay(LiveServer(settings, store, HashingEmbedder()))
    live.start()
    yield live
    live.stop()


@pytest.fixture
def scope() -> dict[str, Any]:
    return scope_fields()


@pytest.fixture
def host(scope: dict[str, Any]) -> HostContext:
    return host_for(scope)


@pytest.fixture
def agent_key(server: LiveServer) -> str:
    return server.key()


@pytest.fixture
def late(settings: Settings, store: Store) -> Iterator[LateServer]:
    """A server that is down (its port refuses) until the test calls ``start()``."""
    live = LateServer(settings, store)
    yield live
    live.stop()


@pytest.fixture
def proxy(server: LiveServer) -> Iterator[FaultProxy]:
    live = FaultProxy(server.url)
    yield live
    live.close()


@pytest.fixture
def black_hole() -> Iterator[BlackHole]:
    hole = BlackHole()
    yield hole
    hole.close()


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    return tmp_path / "profile"


SessionFactory = Callable[..., MemorySession]


@pytest.fixture
def recorder() -> Iterator[FaultProxy]:
    """A recording proxy with no server behind it, for tests where nothing may be sent."""
    live = FaultProxy(dead_url())
    yield live
    live.close()


# A loaded CI machine once took 657 ms over a first recall; the 300 ms budget is the subject of
# tests that pass their own ``recall_timeout``, not of every test that recalls.
ROOMY_RECALL = 10.0


@pytest.fixture
def make_session(profile: Path, host: HostContext, request: pytest.FixtureRequest) -> Iterator[SessionFactory]:
    """Build MemorySessions (default: the real server, the agent key, alice's scope); closed after."""
    opened: list[MemorySession] = []

    def make(url: str | None = None, **kwargs: Any) -> MemorySession:
        if url is None:
            url = request.getfixturevalue("server").url
            kwargs.setdefault("api_key", request.getfixturevalue("agent_key"))
        kwargs.setdefault("host", host)
        kwargs.setdefault("session_id", "session-1")
        kwargs.setdefault("profile_dir", profile)
        kwargs.setdefault("outbox", FAST)
        kwargs.setdefault("recall_timeout", ROOMY_RECALL)
        session = MemorySession(url, **kwargs)
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close(timeout=0)
