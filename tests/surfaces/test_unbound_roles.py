"""Reviewer and admin keys act on every scope of their tenant; a grant on one was accepted and honoured
by some routes only (memory reads refused another agent's scope, while the review queue, the audit log,
tombstone lifts, assist jobs, exports and key creation did not look at it). Such a grant is refused
when the key is made, and a key stored with one before is refused when it is used."""

from __future__ import annotations

import hashlib
import json
import secrets

from engramdb import clock
from engramdb.storage.port import AuditDraft
from engramdb.storage.rows import KeyRecord
from tests.conftest import LiveServer
from tests.factories import scope_fields

BOUND = {"agentId": "coder", "profileId": "default"}


def test_reviewer_and_admin_keys_take_no_grant(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        for role in ("reviewer", "admin"):
            refused = admin.post("/v1/keys", json={"role": role, "grant": BOUND})
            assert refused.status_code == 422, refused.text
            assert refused.json()["field"] == "grant" and "take no grant" in refused.json()["message"]
        # The controls: the same roles without a grant, and the roles a grant binds.
        for role, grant in (("reviewer", {}), ("admin", {}), ("host", BOUND), ("agent", scope_fields())):
            created = admin.post("/v1/keys", json={"role": role, "grant": grant})
            assert created.status_code == 201, (role, created.text)


def test_a_stored_reviewer_key_with_a_grant_is_refused(server: LiveServer) -> None:
    """As a key made before the refusal would be: written to the store directly."""
    secret, key_id = secrets.token_urlsafe(32), secrets.token_hex(6)
    record = KeyRecord(
        key_id=key_id,
        role="reviewer",
        grant_json=json.dumps(BOUND),
        secret_hash=hashlib.sha256(secret.encode()).hexdigest(),
        created_at=clock.now_text(),
    )
    tenant = server.store.tenant("t1", create=True)
    tenant.create_key(record, AuditDraft("key.create", None, "operator", target_kind="api_key", target_id=key_id))
    with server.client(f"egm.t1.{key_id}.{secret}") as legacy:
        refused = legacy.get("/v1/review")
        assert refused.status_code == 401, refused.text
        assert "take no grant" in refused.json()["message"]
    with server.client(server.key(role="reviewer")) as reviewer:
        assert reviewer.get("/v1/review").status_code == 200  # the control: an unbound reviewer key
