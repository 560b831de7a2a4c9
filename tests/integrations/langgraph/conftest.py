"""The LangGraph store's tests run on both backends (the package's ``backend`` is SQLite alone):
``EngramStore`` against a real server, each store made by ``make_store`` and closed after."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engramdb.api.loopback import LoopbackServer
from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.integrations.langgraph import EngramStore
from engramdb.jobs.embedding import drain
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
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


class StillServer(LiveServer):
    """A server whose vectors are made only when a test asks (``settle``, ``suite_settle``): no embedding job
    races the test, so a fact's vector is pending from its write until then."""

    def __init__(self, settings: Settings, store: Store, embedder: Any) -> None:
        from engramdb.api.rest import create_app

        self.store = store
        LoopbackServer.__init__(self, create_app(settings, store=store, embedder=embedder, run_worker=False))


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def suite_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server per module and backend, for tests that each take a fresh agent's scopes."""
    settings = Settings(home=tmp_path_factory.mktemp("suite") / "home", embedder="hashing", embed_poll_seconds=0.05)
    if request.param == "sqlite":
        store: Store = SQLiteStore(settings.home)
    else:
        from engramdb.storage.postgres.store import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_url"), schema=f"t_{uuid.uuid4().hex[:12]}")
    live = StillServer(settings, store, HashingEmbedder())
    live.start()
    yield live
    live.stop()
    store.close()


@pytest.fixture
def fresh(suite_server: LiveServer) -> Iterator[MakeStore]:
    """Empty stores on the module's server: each a host key of an agent no other test uses."""
    made: list[EngramStore] = []

    def make(**participant: Any) -> EngramStore:
        agent = f"lg-{uuid.uuid4().hex[:10]}"
        key = suite_server.key(role="host", agentId=agent, profileId="default")
        made.append(EngramStore(suite_server.url, api_key=key, agent_id=agent, profile_id="default", **participant))
        return made[-1]

    yield make
    for store in made:
        store.close()


@pytest.fixture(params=["user_at", "user_id"])
def fresh_store(request: pytest.FixtureRequest, fresh: MakeStore) -> EngramStore:
    """An empty store, the participant named by the namespace's first label (``user_at=0``) or fixed."""
    return fresh(user_at=0) if request.param == "user_at" else fresh(user_id="erin")


@pytest.fixture
def suite_settle(suite_server: LiveServer) -> Callable[[], int]:
    """``settle`` for the module's server."""
    service = suite_server.app.state.service
    return lambda: drain(suite_server.store.tenant("t1"), service.shared.embedder)
