"""Rows written before the audit's digests covered their whole state (issue 30), on both backends.

A tenant from before has entries whose digests covered less: a fact's lifecycle only, an episode's
event, a record's properties, a key's role and grant, nothing of a revocation, a relationship or
the participant salt. This version's first open covers each current row with one ``audit.cover``
entry (chained, so itself audited) and says so in a closing entry; an export from before is
covered when it is imported. Without the covering, the same tenant fails verification.
"""

from __future__ import annotations

import json
from typing import Any

from engramdb.config import Settings
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.port import AuditEntry, Store
from tests.stores import open_store, store_spec
from tests.surfaces.test_audit_covers_rows import seed_everything
from tests.surfaces.test_audit_tamper import _memory_edit as _sql
from tests.surfaces.test_audit_tamper import _rewrite

Rows = dict[tuple[str, str | None, str], dict[str, Any]]


def _rows(store: Store) -> Rows:
    """The tenant's memories, records and keys by what audit entries name them by."""
    found: Rows = {}
    for table, row in store.tenant("t1").export_rows():
        if table == "memories":
            found[(row["source"], row["scope_key"], row["memory_id"])] = row
        elif table == "records":
            found[("RECORD", row["scope_key"], row["record_id"])] = row
        elif table == "api_keys":
            found[("api_key", None, row["key_id"])] = row
    return found


def _legacy_digest(entry: AuditEntry, rows: Rows) -> str | None:
    """What the version before recorded as an entry's digest (of the row as it is now: only the
    last entry about a row matters to verification)."""
    row = rows.get((entry.target_kind or "", entry.scope_key, entry.target_id or ""))
    if row is None or entry.after_digest is None or entry.target_kind in ("RELATIONSHIP", "tenant"):
        return entry.after_digest if entry.target_kind == "policy" else None
    if entry.target_kind == "MEMORY_FACT":
        state = {
            "id": row["memory_id"],
            "status": row["status"],
            "retiredAt": row["retired_at"],
            "supersededBy": row["superseded_by_id"],
            "reason": row["status_reason"],
        }
        return sha256_hex(canonical_json(state | ({"invalidAt": row["invalid_at"]} if row["invalid_at"] else {})))
    if entry.target_kind == "EPISODE":
        return sha256_hex(row["event_json"])
    if entry.target_kind == "RECORD":
        return sha256_hex(row["properties_json"])
    if entry.action == "key.create":
        return sha256_hex(canonical_json({"role": row["role"], "grant": json.loads(row["grant_json"])}))
    return None  # a revocation recorded nothing


def _legacy_tenant(service: MemoryService, operator: Caller) -> Store:
    """A tenant as the version before left it: its entries re-chained with that version's digests."""
    seed_everything(service, operator)
    store = service.shared.store
    rows = _rows(store)
    entries = [
        AuditEntry(**{**vars(e), "before_digest": None, "after_digest": _legacy_digest(e, rows)})
        for e in store.tenant("t1").audit_entries(0, 100_000)
    ]
    _rewrite(store, entries)
    _sql(store, "DELETE FROM meta WHERE key = 'audit_digests'")
    return store


def _reopened(store: Store) -> Store:
    """The same data opened by this version in another process's place (a new store object)."""
    return open_store(store_spec(store))


def test_the_first_open_covers_rows_from_before_with_audited_entries(service: MemoryService, operator: Caller) -> None:
    store = _legacy_tenant(service, operator)
    before = store.tenant("t1").audit_entries(0, 100_000)
    assert all(e.action != "audit.cover" for e in before)
    rows = _reopened(store)
    try:
        tenant = rows.tenant("t1")
        entries = tenant.audit_entries(0, 100_000)
        covers = entries[len(before) :]
        assert entries[: len(before)] == before  # appended, nothing rewritten
        assert covers and {e.action for e in covers} == {"audit.cover"} and covers[-1].target_kind == "tenant"
        assert f"{len(covers) - 1} rows written before" in (covers[-1].reason or "")
        assert {e.target_kind for e in covers[:-1]} >= {"EPISODE", "MEMORY_FACT", "RECORD", "RELATIONSHIP", "api_key"}
        service = MemoryService(rows, HashingEmbedder(), Settings(home=service.shared.settings.home))
        verdict = service.admin.verify_audit(operator)
        assert verdict.verified and verdict.checked == len(entries), verdict
        assert verdict.rows_checked and verdict.rows_checked >= len(covers) - 1, verdict
        again = _reopened(store)  # covered once: a second open adds nothing
        assert len(again.tenant("t1").audit_entries(0, 100_000)) == len(entries)
        again.close()
    finally:
        rows.close()


def test_without_the_covering_rows_from_before_fail_verification(service: MemoryService, operator: Caller) -> None:
    """The control: the same tenant marked covered (so not covered again) fails, naming a row."""
    store = _legacy_tenant(service, operator)
    _sql(store, "INSERT INTO meta (" + _meta_columns(store) + ") VALUES (" + _meta_values(store) + ")")
    rows = _reopened(store)
    try:
        service = MemoryService(rows, HashingEmbedder(), Settings(home=service.shared.settings.home))
        verdict = service.admin.verify_audit(operator)
        assert not verdict.verified and verdict.row_kind and "audit entry" in (verdict.problem or ""), verdict
    finally:
        rows.close()


def test_an_export_from_before_is_covered_when_imported(service: MemoryService, operator: Caller) -> None:
    store = _legacy_tenant(service, operator)
    exported = list(store.tenant("t1").export_rows())
    assert not any(t == "meta" and r["key"] == "audit_digests" for t, r in exported)  # as the version before
    imported = store.tenant("t2", create=True)
    counts = imported.import_rows(exported)
    assert counts["audit_log"] == len(store.tenant("t1").audit_entries(0, 100_000))
    assert imported.audit_entries(0, 100_000)[-1].action == "audit.cover"
    verdict = service.admin.verify_audit(Caller(tenant="t2", key_id="op", role="admin"))
    assert verdict.verified and verdict.rows_checked, verdict
    again = store.tenant("t3", create=True)  # a covered tenant's export carries its marker: no covering again
    again.import_rows(list(imported.export_rows()))
    assert len(again.audit_entries(0, 100_000)) == len(imported.audit_entries(0, 100_000))


def _meta_columns(store: Store) -> str:
    from engramdb.storage.sqlite.store import SQLiteStore

    return "key, value" if isinstance(store, SQLiteStore) else "tenant, key, value"


def _meta_values(store: Store) -> str:
    from engramdb.storage.sqlite.store import SQLiteStore

    return "'audit_digests', '2'" if isinstance(store, SQLiteStore) else "'t1', 'audit_digests', '2'"
