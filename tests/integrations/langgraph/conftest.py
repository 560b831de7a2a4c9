"""The LangGraph store's tests run on both backends (the package's ``backend`` is SQLite alone):
``EngramStore`` against a real server, each store made by ``make_store`` and closed after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engramdb.integrations.langgraph import EngramStore
from engramdb.jobs.embedding import drain
from tests.conftest import LiveServer

MakeStore = Callable[..., EngramStore]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host_key(server: LiveServer) -> str:
    return server.key(role="host", agentId="coder", profileId="default")


@pytest.fixture
def make_store(server: LiveServer, host_key: str) -> Iterator[MakeStore]:
    """``EngramStore``s on the test's server (``user_at=1`` unless told otherwise)."""
    made: list[EngramStore] = []

    def make(**options: Any) -> EngramStore:
        participant = {} if "user_id" in options else {"user_at": 1}
        store = EngramStore(
            server.url, api_key=host_key, agent_id="coder", profile_id="default", **(participant | options)
        )
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def settle(server: LiveServer) -> Callable[[], int]:
    """Make every pending vector now (the server's job would, a moment later)."""
    service = server.app.state.service
    return lambda: drain(server.store.tenant("t1"), service.shared.embedder)
