"""`engram audit verify` holds each webhook endpoint (where the change feed goes) to the entry that
made it, on both backends: an endpoint redirected, added or put back behind the server's back is
named. Each case starts from a tenant that verifies (the positive control)."""

from __future__ import annotations

from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.webhooks import WebhookCreate
from engramdb.storage.port import Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.surfaces.test_audit_tamper import _memory_edit as _sql

ROW = "(webhook_id, url, kinds_json, secret_salt, secret_check, label, created_at, cursor)"


def _endpoints(service: MemoryService, operator: Caller) -> tuple[str, str]:
    """One endpoint kept, one made and deleted; the tenant verifies, endpoints counted."""
    hooks = service.webhooks
    kept = hooks.create_webhook(operator, WebhookCreate(url="https://hooks.example/kept", kinds=["created"]))
    gone = hooks.create_webhook(operator, WebhookCreate(url="https://hooks.example/gone"))
    hooks.delete_webhook(operator, gone.webhook_id)
    verdict = service.admin.verify_audit(operator)
    assert verdict.verified and verdict.row_id is None and (verdict.rows_checked or 0) >= 1, verdict
    return kept.webhook_id, gone.webhook_id


def _fault(service: MemoryService, operator: Caller) -> tuple[str | None, str | None, list[str], str]:
    verdict = service.admin.verify_audit(operator)
    assert not verdict.verified
    return verdict.row_kind, verdict.row_id, list(verdict.fields), verdict.problem or ""


def test_a_redirected_endpoint_is_named(service: MemoryService, store: Store, operator: Caller) -> None:
    kept, _ = _endpoints(service, operator)
    _sql(store, f"UPDATE webhooks SET url = 'https://attacker.example/x' WHERE webhook_id = '{kept}'")
    kind, row, fields, problem = _fault(service, operator)
    assert (kind, row, fields) == ("webhook", kept, ["url"]) and "webhook.create" in problem
    _sql(store, f"UPDATE webhooks SET url = 'https://hooks.example/kept' WHERE webhook_id = '{kept}'")
    assert service.admin.verify_audit(operator).verified  # put right, it verifies again


def test_an_inserted_or_restored_endpoint_is_named(service: MemoryService, store: Store, operator: Caller) -> None:
    kept, gone = _endpoints(service, operator)
    columns, tenant = (ROW, "") if isinstance(store, SQLiteStore) else (ROW.replace("(", "(tenant, "), "'t1', ")
    values = "'https://attacker.example/x', '[]', 'salt', 'check', NULL, '2026-01-01T00:00:00.000000Z', 0"
    _sql(store, f"INSERT INTO webhooks {columns} VALUES ({tenant}'wh_00000000feed0001', {values})")
    kind, row, _, problem = _fault(service, operator)
    assert (kind, row) == ("webhook", "wh_00000000feed0001") and "no audit entry wrote it" in problem
    _sql(store, "DELETE FROM webhooks WHERE webhook_id = 'wh_00000000feed0001'")
    assert service.admin.verify_audit(operator).verified
    _sql(store, f"INSERT INTO webhooks {columns} VALUES ({tenant}'{gone}', {values})")
    kind, row, _, problem = _fault(service, operator)
    assert (kind, row) == ("webhook", gone) and "webhook.delete" in problem and kept != gone
