"""One participant's rows (its export: the People page, ``GET /v1/export``, ``engram export
--participant``) are read by its scopes, and are exactly the rows of the tenant's whole export that
belong to its scopes.

The export read the tenant's whole export and filtered it in Python, and its scopes were found by
reading every memory and record of the tenant by participant: 24-32 s for one participant of a
1,000,000-memory tenant (a review helper's script, session 45). Now the scopes come from the ``scopes``
table by participant (an index) and each table is read by scope. The whole export, filtered, is the
oracle here, on both backends; the reads are counted in SQLite's steps, never timed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.erasure import participant_rows
from engramdb.core.service import MemoryService
from engramdb.storage.columns import TENANT_WIDE
from engramdb.storage.port import TenantStore
from engramdb.storage.sqlite.store import SQLiteStore
from engramdb.storage.sqlite.tenant import SQLiteTenantStore
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, participant, scope_fields
from tests.sqlite_steps import vm_steps

ALICE = participant("alice")
SCOPES = {  # two scopes of alice's, one of bob's, and one of alice's that is emptied
    "alice": scope_fields(),
    "alice-planner": scope_fields(agentId="planner"),
    "bob": scope_fields(participantScopeHash=participant("bob")),
    "alice-emptied": scope_fields(agentId="scratch"),
}


def _oracle(tenant: TenantStore, participant_hash: str) -> list[tuple[str, dict[str, Any]]]:
    """What the export was: the whole export's rows of the scopes that hold the participant's rows."""
    rows = list(tenant.export_rows())
    scopes = {r["scope_key"] for t, r in rows if t in ("memories", "records") and r[_HASH] == participant_hash}
    return [(t, r) for t, r in rows if t not in TENANT_WIDE and r.get("scope_key") in scopes]


_HASH = "participant_scope_hash"


def test_a_participants_rows_are_its_scopes_rows_of_the_whole_export(server: LiveServer) -> None:
    for name, fields in SCOPES.items():
        with server.client(server.key(**fields)) as client:
            who = name.split("-")[0].title()
            written = client.post("/v1/facts", json=fact_body(f"{who} lives in Lyon", kind="city", scope=fields))
            client.post(
                f"/v1/facts/{written.json()['id']}/correct", json={"text": f"{who} lives in Nantes", "reason": "moved"}
            )
            turn = episode_body(f"{who} met Marie Curie at Acme Corp in Paris", scope=fields)
            episode = client.post("/v1/episodes", json=turn).json()["id"]
            task = {"label": "TASK", "data": {"title": f"{who}'s task", "STEP": [{"title": "first"}]}}  # a link
            record = client.post("/v1/records", json=task).json()["records"][0]["id"]
            for version in range(3):  # versions and values: several rows of one record in each table
                change = {"properties": {f"p{version}": version, "title": f"{who}'s task, take {version}"}}
                assert client.patch(f"/v1/records/{record}", json=change).status_code == 200
            noted = {"label": "NOTE", "data": {"text": f"{who}'s note", "tags": ["b", "a"]}}
            note = client.post("/v1/records", json=noted).json()["records"][0]["id"]
            if name == "alice-emptied":  # every row of the scope deleted: its name stays in the scopes table
                assert client.delete(f"/v1/facts/{written.json()['id']}").status_code == 200  # every version
                assert client.delete(f"/v1/episodes/{episode}").status_code == 200
                assert client.delete(f"/v1/records/{record}", params={"cascade": "true"}).status_code == 200
                assert client.delete(f"/v1/records/{note}").status_code == 200
    tenant = server.store.tenant("t1")
    for who in ("alice", "bob"):
        expected = _oracle(tenant, participant(who))
        assert list(participant_rows(tenant, participant(who))) == expected  # the same rows, in the same order
        tables = {t for t, _ in expected}
        assert {"memories", "tombstones", "records", "record_values", "record_history", "relationships"} <= tables
    alice = [r for _, r in participant_rows(tenant, ALICE)]
    assert {r["agent_id"] for r in alice if "agent_id" in r} == {"coder", "planner"}  # not the emptied scope's
    assert not any("Bob" in str(r) for r in alice) and any("Alice lives in Nantes" in str(r) for r in alice)
    assert list(participant_rows(tenant, participant("carol"))) == []  # a participant with no rows


@contextmanager
def _steps(tenant: SQLiteTenantStore) -> Iterator[Callable[[], int]]:
    """The SQLite steps of every read ``tenant`` makes inside the block (a progress handler on its readers)."""
    count = 0
    real = tenant._db.reading

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    @contextmanager
    def reading() -> Iterator[Any]:
        with real() as conn:
            conn.set_progress_handler(tick, 1)
            try:
                yield conn
            finally:
                conn.set_progress_handler(None, 1)

    tenant._db.reading = reading  # type: ignore[method-assign]
    try:
        yield lambda: count
    finally:
        del tenant._db.reading


def test_a_participants_export_reads_the_same_however_much_others_hold(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    alice = Caller(tenant="t1", key_id="k-alice", role="agent", grant=SCOPES["alice"])
    bob = Caller(tenant="t1", key_id="k-bob", role="agent", grant=SCOPES["bob"])
    store.tenant("t1", create=True)
    service.writes.write_episode(alice, EpisodeWrite.model_validate(episode_body("tea", scope=SCOPES["alice"])))
    service.writes.write_episode(bob, EpisodeWrite.model_validate(episode_body("coffee", scope=SCOPES["bob"])))
    tenant = store.tenant("t1")
    assert isinstance(tenant, SQLiteTenantStore)

    def cost() -> tuple[int, int]:
        with _steps(tenant) as mine:
            assert [r["memory_id"] for t, r in participant_rows(tenant, ALICE) if t == "memories"]
        with _steps(tenant) as whole:
            list(tenant.export_rows())
        return mine(), whole()

    try:
        before, whole_before = cost()
        bodies = [episode_body(f"coffee {i}", scope=SCOPES["bob"], turn=i + 1) for i in range(1_000)]
        service.writes.write_episodes(bob, [EpisodeWrite.model_validate(b) for b in bodies])
        after, whole_after = cost()
        with tenant._db.write() as conn:  # statistics: each of the two scopes is half the table
            conn.execute("ANALYZE")
        tenant._db.fetchall("SELECT 1 FROM scopes LIMIT 1")  # the reader loads the statistics (not counted)
        analyzed, _ = cost()
        keys = json.dumps(tenant.participant_scopes(ALICE))
        by_keys = vm_steps(tenant.path, [(f"SELECT * FROM memories WHERE scope_key IN {_KEYS} ORDER BY rowid", [keys])])
    finally:
        store.close()
    assert whole_after > whole_before + 1_000  # the positive control: the count sees a read of every memory
    assert after == before  # alice's export reads none of bob's rows
    # Where a scope is half the table, SQLite walks all of it for a plain IN of the keys (the control);
    # the export starts from the keys, so it still reads only alice's (a plan's few steps differ).
    assert by_keys > 1_000 and analyzed < before + 100, (by_keys, analyzed, before)


_KEYS = "(SELECT value FROM json_each(?))"
