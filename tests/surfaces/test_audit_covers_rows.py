"""`engram audit verify` holds every row that decides what a read returns, or who may read it, to
the audit (issue 30, finding 8), on both backends.

Each case starts from a tenant that verifies (the positive control), edits the database as an
attacker with file or SQL access would, and expects the verdict to name the row and what of it
changed. The six tamperings of the finding go through the `engram audit verify` command itself.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engramdb import clock
from engramdb.audit_chain.states import memory_digest
from engramdb.contract.canonical import fact_id
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.knowledge import DeleteQuery, LinkRequest, RecordWrite
from engramdb.models.memories import WriteOptions
from engramdb.models.policy import TenantPolicy
from engramdb.storage.port import AuditEntry, Store, chain_hash
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body
from tests.surfaces.test_audit_cli import SCOPE, _env, _verify
from tests.surfaces.test_audit_tamper import _memory_edit as _sql


def seed_everything(service: MemoryService, operator: Caller) -> None:
    """A tenant with a row of every kind the audit covers, each in the states the findings edit."""
    writes = service.writes
    episode = writes.write_episode(
        operator, EpisodeWrite.model_validate(episode_body("We chose Postgres", scope=SCOPE))
    )
    for i in range(2):  # value 1 supersedes value 0
        writes.write_fact(operator, FactWrite.model_validate(fact_body(f"value {i}", kind="k", scope=SCOPE)))
    untrusted = fact_body("Deploys on Fridays", kind="deploy", trustClass="untrusted", scope=SCOPE)
    assert writes.write_fact(operator, FactWrite.model_validate(untrusted)).outcome == "parked"
    derived = fact_body("Likes tea", kind="drink", sourceEventId=episode.id, scope=SCOPE)
    assert writes.write_fact(operator, FactWrite.model_validate(derived), WriteOptions(origin="derived")).outcome == (
        "parked"
    )
    mentioned = fact_body("The ledger runs on Postgres", kind="ledger", sourceEventId=episode.id, scope=SCOPE)
    fact = writes.write_fact(operator, FactWrite.model_validate(mentioned))  # DERIVED_FROM its episode
    session = {"title": "Database choice", "DECISION": [{"title": "Postgres for the ledger"}]}
    records = service.record_writes
    records.write_records(operator, RecordWrite.model_validate({"label": "SESSION", "data": session, "scope": SCOPE}))
    dana = records.write_records(
        operator, RecordWrite.model_validate({"label": "ENTITY", "data": {"name": "Dana"}, "scope": SCOPE})
    ).records[0]
    mention = {"source": {"id": fact.id, "kind": "MEMORY_FACT"}, "target": dana.id, "type": "MENTIONS", "scope": SCOPE}
    records.link_records(operator, LinkRequest.model_validate(mention))
    store = service.shared.store
    auth.create_key(store, tenant="t1", role="agent", grant=SCOPE)
    _, gone = auth.create_key(store, tenant="t1", role="reviewer", grant={})
    assert auth.revoke_key(store, tenant="t1", key_id=gone.key_id)
    service.admin.put_policy(operator, TenantPolicy())
    service.shared.participant_hash(operator, "alice")  # makes the tenant's participant salt


def _verified(service: MemoryService, operator: Caller) -> int:
    verdict = service.admin.verify_audit(operator)
    assert verdict.verified and verdict.rows_checked and verdict.rows_checked >= 16, verdict  # the positive control
    return verdict.rows_checked


# (what the attacker does, the SQL, the row kind named, the field classes named, a word of the problem)
FINDING_8 = [
    pytest.param(
        "UPDATE memories SET status = 'active', status_reason = NULL, active_from = recorded_at "
        "WHERE status = 'pending_review' AND origin = 'stated'",
        "MEMORY_FACT",
        ["lifecycle"],
        "edited",
        id="pending-review-made-active",
    ),
    pytest.param(
        "UPDATE memories SET origin = 'stated', trust_class = 'trusted' WHERE origin = 'derived'",
        "MEMORY_FACT",
        ["trust"],
        "edited",
        id="derived-made-stated-and-trusted",
    ),
    pytest.param(
        "UPDATE memories SET status = 'active', retired_at = NULL, superseded_by_id = NULL, invalid_at = NULL, "
        "status_reason = NULL WHERE status = 'superseded'",
        "MEMORY_FACT",
        ["lifecycle"],
        "edited",
        id="superseded-made-active",
    ),
    pytest.param(
        "UPDATE records SET properties_json = '{\"name\":\"Mallory\"}' WHERE label = 'ENTITY'",
        "RECORD",
        ["properties"],
        "edited",
        id="record-properties-edited",
    ),
]
MORE = [
    pytest.param(
        "UPDATE records SET label = 'ADMIN' WHERE label = 'ENTITY'", "RECORD", ["label"], "edited", id="label"
    ),
    pytest.param("UPDATE api_keys SET role = 'admin' WHERE role = 'agent'", "api_key", ["role"], "edited", id="role"),
    pytest.param(
        "UPDATE api_keys SET grant_json = '{}' WHERE role = 'agent'", "api_key", ["grant"], "edited", id="grant"
    ),
    pytest.param(
        "UPDATE api_keys SET revoked_at = NULL WHERE revoked_at IS NOT NULL",
        "api_key",
        ["revocation"],
        "edited",
        id="revocation-undone",
    ),
    pytest.param(
        f"UPDATE api_keys SET secret_hash = '{'0' * 64}' WHERE role = 'agent'",
        "api_key",
        ["secret"],
        "edited",
        id="secret-swapped",
    ),
    pytest.param(
        "UPDATE memories SET pinned = 1, importance = 1.0 WHERE source = 'EPISODE'",
        "EPISODE",
        ["marks"],
        "edited",
        id="marks",
    ),
    pytest.param(
        f"UPDATE memories SET participant_scope_hash = '{'b' * 64}' WHERE source = 'EPISODE'",
        "EPISODE",
        ["scope"],
        "scope key",
        id="scope-columns-moved",
    ),
    pytest.param(
        "UPDATE relationships SET properties_json = '{\"weight\":9}' WHERE type = 'MENTIONS'",
        "RELATIONSHIP",
        ["properties"],
        "edited",
        id="relationship-properties",
    ),
    pytest.param(
        "UPDATE relationships SET type = 'OWNS' WHERE type = 'MENTIONS'",
        "RELATIONSHIP",
        [],
        "no audit entry",
        id="relationship-retyped",
    ),
    pytest.param(
        "UPDATE meta SET value = replace(value, 'pending_review', 'active') WHERE key = 'policy'",
        "policy",
        ["value"],
        "not what audit entry",
        id="policy-edited",
    ),
    pytest.param("DELETE FROM meta WHERE key = 'policy'", "policy", ["value"], "is gone", id="policy-deleted"),
    pytest.param(
        f"UPDATE meta SET value = '{'c' * 64}' WHERE key = 'participant_salt'",
        "tenant",
        ["value"],
        "not what audit entry",
        id="participant-salt-swapped",
    ),
]


@pytest.mark.parametrize(("sql", "kind", "fields", "word"), FINDING_8)
def test_engram_audit_verify_names_an_edited_row(
    service: MemoryService, operator: Caller, sql: str, kind: str, fields: list[str], word: str
) -> None:
    seed_everything(service, operator)
    store = service.shared.store
    first = _verify(store)
    assert first.returncode == 0, first.stdout + first.stderr  # the positive control, through the same command
    _sql(store, sql)
    result = _verify(store)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{kind} " in result.stderr and f"({', '.join(fields)})" in result.stderr, result.stderr
    assert "altered" in result.stderr and word in result.stderr, result.stderr


@pytest.mark.parametrize(("sql", "kind", "fields", "word"), MORE)
def test_verify_names_every_covered_field_edited(
    service: MemoryService, operator: Caller, sql: str, kind: str, fields: list[str], word: str
) -> None:
    seed_everything(service, operator)
    _verified(service, operator)
    _sql(service.shared.store, sql)
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified and verdict.row_kind == kind and verdict.row_id, verdict
    assert verdict.fields == fields and word in (verdict.problem or ""), verdict


def test_an_inserted_admin_key_is_named(service: MemoryService, operator: Caller) -> None:
    seed_everything(service, operator)
    store = service.shared.store
    assert _verify(store).returncode == 0
    tenant = "" if isinstance(store, SQLiteStore) else "tenant, "
    t1 = "" if isinstance(store, SQLiteStore) else "'t1', "
    _sql(
        store,
        f"INSERT INTO api_keys ({tenant}key_id, role, grant_json, secret_hash, created_at, label, revoked_at) "
        f"VALUES ({t1}'f00dfeed0001', 'admin', '{{}}', '{'a' * 64}', '2026-01-01T00:00:00.000000Z', NULL, NULL)",
    )
    result = _verify(store)
    assert result.returncode == 1 and "api_key f00dfeed0001 altered" in result.stderr, result.stderr
    assert "no audit entry wrote it" in result.stderr, result.stderr


def test_an_inserted_relationship_is_named(service: MemoryService, operator: Caller) -> None:
    seed_everything(service, operator)
    _verified(service, operator)
    store = service.shared.store
    tenant, t1 = ("", "") if isinstance(store, SQLiteStore) else ("tenant, ", "r.tenant, ")
    _sql(
        store,
        f"INSERT INTO relationships ({tenant}scope_key, type, source_kind, source, target_kind, target, "
        f"properties_json, created_at) SELECT {t1}r.scope_key, 'OWNS', 'RECORD', r.rowid, 'RECORD', r.rowid, '{{}}', "
        "r.created_at FROM records r WHERE r.label = 'ENTITY'",
    )
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified and verdict.row_kind == "RELATIONSHIP" and "-OWNS->" in (verdict.row_id or "")
    assert "no audit entry wrote it" in (verdict.problem or ""), verdict


def forge_fact(store: Store, text: str) -> str:
    """Store a fact behind the server's back, as a careful attacker would: a contract event whose id
    is its hash, in a row like the server's own (copied from a real fact). Return its id."""
    tenant = store.tenant("t1")
    template = next(
        row for table, row in tenant.export_rows() if table == "memories" and row["status"] == "active" and row["kind"]
    )
    event = json.loads(template["event_json"]) | {"text": text}
    forged = fact_id(
        runtime=event["runtime"],
        agent_id=event["agentId"],
        profile_id=event["profileId"],
        participant_scope_hash=event["participantScopeHash"],
        subject_key=event["subjectKey"],
        kind=event["kind"],
        source_event_id=event["sourceEventId"],
        text=text,
    )
    event["factId"] = forged
    changes = {"memory_id": forged, "text": text, "embed_text": text, "event_json": json.dumps(event)}
    _copy_row(
        store, template["memory_id"], changes | ({} if isinstance(store, SQLiteStore) else {"lexical_body": text})
    )
    return forged


def _copy_row(store: Store, memory_id: str, changes: dict[str, Any]) -> None:
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.tenant("t1").path) as conn:
            columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)") if r[1] != "rowid"]
            picked = ", ".join("?" if c in changes else c for c in columns)
            values = [changes[c] for c in columns if c in changes]
            conn.execute(
                f"INSERT INTO memories ({', '.join(columns)}) SELECT {picked} FROM memories WHERE memory_id = ?",
                [*values, memory_id],
            )
        return
    import psycopg

    from tests.stores import as_postgres

    pg = as_postgres(store)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {pg.schema}")
        columns = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = "
                "'memories' AND is_generated = 'NEVER' AND is_identity = 'NO' ORDER BY ordinal_position",
                (pg.schema,),
            )
        ]
        picked = ", ".join("%s" if c in changes else c for c in columns)
        values = [changes[c] for c in columns if c in changes]
        conn.execute(
            f"INSERT INTO memories ({', '.join(columns)}) SELECT {picked} FROM memories WHERE memory_id = %s",
            [*values, memory_id],
        )


def test_a_fact_inserted_without_an_entry_is_named(service: MemoryService, operator: Caller) -> None:
    seed_everything(service, operator)
    store = service.shared.store
    assert _verify(store).returncode == 0
    forged = forge_fact(store, "The admin password is hunter2")
    result = _verify(store)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"MEMORY_FACT {forged} altered" in result.stderr and "no audit entry wrote it" in result.stderr


def _append_entry(store: Store, forged: str, at: str) -> None:
    """Append an audit entry that writes the forged fact, chained and hashed as the server would."""
    tenant = store.tenant("t1")
    head = tenant.audit_entries(0, 100_000)[-1]
    row = tenant.facts_by_id(forged, ("active",))[0]
    draft = AuditEntry(
        seq=head.seq + 1,
        at=at,
        action="fact.write",
        actor_key_id=head.actor_key_id,
        actor_role="admin",
        target_kind="MEMORY_FACT",
        target_id=forged,
        scope_key=row.scope_key,
        before_digest=None,
        after_digest=memory_digest(row),
        reason=None,
        prev_hash=head.hash,
        hash="",
    )
    fields = vars(replace(draft, hash=chain_hash(draft, seq=draft.seq, at=at, prev_hash=head.hash)))
    columns = ", ".join(fields)
    values = ", ".join("NULL" if v is None else str(v) if isinstance(v, int) else f"'{v}'" for v in fields.values())
    if isinstance(store, SQLiteStore):
        _sql(store, f"INSERT INTO audit_log ({columns}) VALUES ({values})")
    else:
        _sql(store, f"INSERT INTO audit_log (tenant, {columns}) VALUES ('t1', {values})")


def test_a_forged_tail_entry_is_caught_by_the_anchors_when_it_claims_to_be_older(
    service: MemoryService, operator: Caller
) -> None:
    """The forger appends a consistent entry for an inserted fact, dated ten minutes before the last
    anchor was taken (to pass as old): that anchor says the chain ended before it then."""
    seed_everything(service, operator)
    store = service.shared.store
    assert _verify(store).returncode == 0  # anchors the head
    head = store.tenant("t1").audit_entries(0, 100_000)[-1]
    (anchors,) = Path(_env(store)["ENGRAM_HOME"]).glob("audit-anchors/*/t1.jsonl")
    anchored = json.loads(anchors.read_text().splitlines()[-1])
    assert anchored["seq"] == head.seq
    forged = forge_fact(store, "The admin password is hunter2")
    _append_entry(store, forged, clock.to_text(clock.parse(anchored["at"]) - timedelta(minutes=10)))
    result = _verify(store)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"broken at entry {head.seq + 1}" in result.stderr and "backdated (forged)" in result.stderr


def test_a_forged_tail_entry_dated_after_the_last_anchor_is_beyond_what_anchors_prove(
    service: MemoryService, operator: Caller
) -> None:
    """The same forgery dated now: nothing outside the database saw the chain since the last anchor,
    so nothing can tell it from a real write (docs/operations.md says so). The control of the test above."""
    seed_everything(service, operator)
    store = service.shared.store
    assert _verify(store).returncode == 0
    forged = forge_fact(store, "The admin password is hunter2")
    _append_entry(store, forged, clock.now_text())
    result = _verify(store)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_server_names_an_edited_row(server: LiveServer) -> None:
    with server.client(server.key()) as agent:
        untrusted = fact_body("Deploys on Fridays", kind="deploy", trustClass="untrusted")
        assert agent.post("/v1/facts", json=untrusted).json()["outcome"] == "parked"
    with server.client(server.key(role="reviewer")) as http:
        assert http.get("/v1/audit/verify").json()["verified"]
        _sql(server.store, "UPDATE memories SET status = 'active' WHERE status = 'pending_review'")
        verdict = http.get("/v1/audit/verify")
    assert verdict.status_code == 200 and not verdict.json()["verified"], verdict.text
    assert verdict.json()["rowKind"] == "MEMORY_FACT" and verdict.json()["fields"] == ["lifecycle"], verdict.json()


def test_a_deleted_record_put_back_is_named(service: MemoryService, operator: Caller) -> None:
    seed_everything(service, operator)
    _verified(service, operator)
    store = service.shared.store
    tenant = "" if isinstance(store, SQLiteStore) else "tenant, "
    columns = (
        f"{tenant}record_id, scope_key, agent_id, profile_id, privacy_scope, participant_scope_hash, "
        "sandbox_eligible, label, properties_json, merge_key, origin, version, created_at, updated_at"
    )
    dana = _record_id(store)
    _sql(store, f"CREATE TABLE stash AS SELECT * FROM records WHERE record_id = '{dana}'")  # the attacker's copy
    service.record_deletes.delete_record(operator, dana, DeleteQuery.model_validate(SCOPE))
    assert service.admin.verify_audit(operator).verified  # the deletion itself is as audited
    _sql(store, f"INSERT INTO records ({columns}) SELECT {columns} FROM stash")
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified and (verdict.row_kind, verdict.row_id) == ("RECORD", dana), verdict
    assert "record.delete) removed it, yet it is stored" in (verdict.problem or ""), verdict


def _record_id(store: Store) -> str:
    found = [r for t, r in store.tenant("t1").export_rows() if t == "records" and r["label"] == "ENTITY"]
    return str(found[0]["record_id"])
