"""`engram audit verify` recomputes the chain and names the first entry that was tampered with."""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.storage.port import Store
from engramdb.storage.postgres.store import PostgresStore
from engramdb.storage.sqlite.store import SQLiteStore
from tests.cli import engram
from tests.factories import episode_body, fact_body, scope_fields
from tests.stores import as_postgres

SCOPE = scope_fields()
_HOMES: weakref.WeakKeyDictionary[PostgresStore, Path] = weakref.WeakKeyDictionary()


def _env(store: Store) -> dict[str, str]:
    if isinstance(store, SQLiteStore):
        return {**os.environ, "ENGRAM_HOME": str(store.home)}
    pg = as_postgres(store)
    home = _HOMES.get(pg)  # its audit anchors, the CLI's own: one folder per store (a schema is used again)
    if home is None:
        home = _HOMES[pg] = Path(tempfile.mkdtemp(prefix=f"engram-{pg.schema}-"))
        atexit.register(shutil.rmtree, home, ignore_errors=True)  # a test leaves no folder behind
    return {
        **os.environ,
        "ENGRAM_DATABASE_URL": pg.url,
        "ENGRAM_PG_SCHEMA": pg.schema,
        "ENGRAM_HOME": str(home),
    }


def _verify(store: Store) -> subprocess.CompletedProcess[str]:
    """``engram audit verify`` on the store's data folder, run in this process (tests/cli.py)."""
    return engram("audit", "verify", "--tenant", "t1", env=_env(store))


def _verify_in_a_process(store: Store) -> subprocess.CompletedProcess[str]:
    """The same command as the installed script runs it: its own process, exit code and streams."""
    return subprocess.run(
        [sys.executable, "-m", "engramdb.cli", "audit", "verify", "--tenant", "t1"],
        env=_env(store),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _seed(service: MemoryService, operator: Caller) -> Store:
    for i in range(5):
        service.writes.write_episode(
            operator, EpisodeWrite.model_validate(episode_body(f"turn {i}", turn=i, scope=SCOPE))
        )
        fact = fact_body(f"value {i}", kind="k", sourceEventId=f"s{i}", scope=SCOPE)
        service.writes.write_fact(operator, FactWrite.model_validate(fact))
    return service.shared.store


def _edit(store: Store, *statements: str) -> None:
    """Change the audit table behind EngramDB's back, bypassing its guards as an attacker would."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute("DROP TRIGGER audit_log_no_update")
            conn.execute("DROP TRIGGER audit_log_no_delete")
            conn.execute("DROP TRIGGER audit_log_erase_only")
            for sql in statements:
                conn.execute(sql)
        return
    import psycopg

    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {pg.schema}")
        conn.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
        for sql in statements:
            conn.execute(sql)


def test_untouched_chain_verifies(service: MemoryService, operator: Caller) -> None:
    store = _seed(service, operator)
    result = _verify(store)
    assert result.returncode == 0, result.stderr
    assert "verified: 18 entries" in result.stdout  # 10 writes, 4 supersessions, 4 tombstones


def test_an_edited_row_is_named(service: MemoryService, operator: Caller) -> None:
    store = _seed(service, operator)
    _edit(store, "UPDATE audit_log SET reason = 'nothing happened' WHERE seq = 7")
    for result in (_verify(store), _verify_in_a_process(store)):
        assert result.returncode == 1
        assert "broken at entry 7" in result.stderr and "edited" in result.stderr


def test_a_deleted_row_is_named(service: MemoryService, operator: Caller) -> None:
    store = _seed(service, operator)
    _edit(store, "DELETE FROM audit_log WHERE seq = 4")
    result = _verify(store)
    assert result.returncode == 1 and "broken at entry 4" in result.stderr and "missing" in result.stderr


def test_a_rehashed_row_still_breaks_the_next_link(service: MemoryService, operator: Caller) -> None:
    """Recomputing the edited row's own hash does not help: the next entry's prevHash disagrees."""
    from engramdb.audit_chain import reason_digest
    from engramdb.storage.port import chain_hash

    store = _seed(service, operator)
    entry = service.shared.store.tenant("t1").audit_entries(2, 1)[0]
    digest = reason_digest("forged", "n")
    forged = chain_hash(
        entry.__class__(**{**vars(entry), "reason": "forged"}),
        seq=3,
        at=entry.at,
        prev_hash=entry.prev_hash,
        reason_digest=digest,
    )
    _edit(
        store,
        f"UPDATE audit_log SET reason = 'forged', reason_nonce = 'n', reason_digest = '{digest}', "
        f"hash = '{forged}' WHERE seq = 3",
    )
    result = _verify(store)
    assert result.returncode == 1 and "broken at entry 4" in result.stderr


def test_listings_show_stored_text_with_brackets_as_written(service: MemoryService, operator: Caller) -> None:
    """Stored strings are not rich markup: "[/x]" would crash the table, "[b]" would vanish."""
    text = "Likes [/x] and [b]bold[/b] brackets"
    written = service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body(text, kind="quirk", trustClass="untrusted", scope=SCOPE))
    )
    assert written.memory.status == "pending_review"
    env = {**_env(service.shared.store), "COLUMNS": "400"}
    for command in (["review", "list"], ["audit", "list"]):
        shown = subprocess.run(
            [sys.executable, "-m", "engramdb.cli", *command, "--tenant", "t1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        expected = text if command[0] == "review" else "awaiting review (trust=untrusted"
        assert expected in shown.stdout, shown.stdout
