"""Tampering the chain alone cannot show, shown by `engram audit verify` on both backends (issue 21):
truncation, a rewrite re-hashed to the end, a deletion renumbered, and memories edited or
inserted behind the server's back. Each starts from a verified (so anchored) chain."""

from __future__ import annotations

import json
import time
from typing import Any

from engramdb.audit_chain import reason_digest
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.storage.port import AuditEntry, Store, chain_hash
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body
from tests.stores import as_postgres
from tests.surfaces.test_audit_cli import _edit, _seed, _verify


def _anchored(service: MemoryService, operator: Caller) -> Store:
    store = _seed(service, operator)
    first = _verify(store)  # verifying anchors the head it verified
    assert first.returncode == 0 and "verified: 18 entries, 10 memories" in first.stdout, first.stdout + first.stderr
    return store


def _anchored_here(service: MemoryService, operator: Caller) -> Store:
    """As _anchored, through the service in this process (the operation the CLI calls), to keep
    the suite short: the CLI itself is run by the truncation and memory-text cases."""
    store = _seed(service, operator)
    first = service.admin.verify_audit(operator)
    assert first.verified and first.checked == 18 and first.memories_checked == 10, first
    return store


def _broken_here(service: MemoryService, operator: Caller, *words: str) -> None:
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified, verdict
    for word in words:
        assert word in (verdict.problem or ""), verdict


def _entries(store: Store) -> list[AuditEntry]:
    return store.tenant("t1").audit_entries(0, 1000)


def _rewrite(store: Store, entries: list[AuditEntry]) -> None:
    """Replace the whole log by ``entries``, numbered from 1 and re-hashed, as an attacker with
    write access to the database (but not the anchor key) can."""
    rows, prev = [], "0" * 64
    for seq, entry in enumerate(entries, start=1):
        fields = {**vars(entry), "seq": seq, "prev_hash": prev}
        if fields.get("reason_digest") is not None and fields.get("reason") is not None:  # the chain covers it
            fields["reason_digest"] = reason_digest(fields["reason"], fields.get("reason_nonce") or "")
        fields["hash"] = prev = chain_hash(
            AuditEntry(**fields),
            seq=seq,
            at=entry.at,
            prev_hash=fields["prev_hash"],
            reason_digest=fields.get("reason_digest"),
        )
        rows.append(fields)
    statements = [f"DELETE FROM audit_log WHERE seq > {len(rows)}"]
    for row in rows:  # in place, row by row: each backend keeps its own bookkeeping columns
        sets = ", ".join(f"{name} = {_sql(value)}" for name, value in row.items() if name not in ("seq", "rowid"))
        statements.append(f"UPDATE audit_log SET {sets} WHERE seq = {row['seq']}")
    _edit(store, *statements)


def _sql(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _broken(store: Store, *words: str) -> str:
    result = _verify(store)
    assert result.returncode == 1, result.stdout + result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


def test_deleting_the_last_entries_is_detected(service: MemoryService, operator: Caller) -> None:
    store = _anchored(service, operator)
    _edit(store, "DELETE FROM audit_log WHERE seq > 15")  # the chain that is left still links
    _broken(store, "entry 18", "is gone", "truncated")


def test_an_edit_rehashed_to_the_end_is_detected(service: MemoryService, operator: Caller) -> None:
    store = _anchored_here(service, operator)
    entries = _entries(store)
    entries[6] = AuditEntry(**{**vars(entries[6]), "reason": "nothing happened"})
    _rewrite(store, entries)
    _broken_here(service, operator, "entry 18", "rewritten")


def test_a_deletion_renumbered_is_detected(service: MemoryService, operator: Caller) -> None:
    store = _anchored_here(service, operator)
    entries = _entries(store)
    _rewrite(store, entries[:3] + entries[4:])  # entry 4 gone, the rest renumbered 4-17, re-hashed
    _broken_here(service, operator, "entry 18", "is gone")


def test_a_forged_anchor_is_detected(service: MemoryService, operator: Caller) -> None:
    _anchored_here(service, operator)
    anchors = service.shared.anchors.file("t1")
    line = json.loads(anchors.read_text().splitlines()[-1])
    with anchors.open("a") as f:  # an attacker without the key appends a head of their own
        f.write(json.dumps({**line, "seq": 5, "hash": "f" * 64}) + "\n")
    _broken_here(service, operator, "entry 5", "forged")


def test_a_memory_text_edited_in_the_database_is_detected(service: MemoryService, operator: Caller) -> None:
    store = _anchored(service, operator)
    _memory_edit(store, "UPDATE memories SET text = 'value 3 (edited)' WHERE text = 'value 3'")
    _broken(store, "altered", "text was edited")


def test_a_memory_event_edited_in_the_database_is_detected(service: MemoryService, operator: Caller) -> None:
    store = _anchored_here(service, operator)
    # Provenance is neither in the id nor in the text: only the audit entry's digest shows this.
    _memory_edit(
        store,
        'UPDATE memories SET event_json = replace(event_json, \'"provenance":"test"\', '
        '\'"provenance":"forged"\') WHERE event_json LIKE \'%"summary":"turn 2"%\'',
    )
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified and verdict.memory_id is not None, verdict
    assert verdict.fields == ["content"] and "not what audit entry" in (verdict.problem or ""), verdict


def test_the_running_server_anchors_its_head(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        assert http.post("/v1/episodes", json=episode_body()).status_code == 201
    home = server.app.state.service.shared.settings.home
    head = server.store.tenant("t1").audit_entries(0, 1000)[-1]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = [json.loads(x) for f in home.glob("audit-anchors/*/t1.jsonl") for x in f.read_text().splitlines()]
        if lines and lines[-1]["seq"] == head.seq:
            assert lines[-1]["hash"] == head.hash
            return
        time.sleep(0.1)
    raise AssertionError(f"the head {head.seq} was not anchored")


def _memory_edit(store: Store, sql: str) -> None:
    """Change a memory row behind EngramDB's back."""
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.tenant("t1").path) as conn:
            conn.execute(sql)
        return
    import psycopg

    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {pg.schema}")
        conn.execute(sql)
