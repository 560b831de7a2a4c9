"""A tenant's API keys on PostgreSQL: created and revoked with their audit entry, read by id."""

from __future__ import annotations

from engramdb.errors import ConflictError
from engramdb.storage.port import AuditDraft, KeyRecord
from engramdb.storage.postgres.access import TenantAccess

_KEY_COLUMNS = "key_id, role, grant_json, secret_hash, created_at, label, revoked_at"


class PostgresKeys:
    """Keys (part of ``PostgresTenantStore``); the secret's hash only, never the secret."""

    def create_key(self: TenantAccess, key: KeyRecord, audit: AuditDraft) -> None:
        with self.transaction() as tx:
            inserted = tx.query(
                f"INSERT INTO api_keys (tenant, {_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, NULL) "
                "ON CONFLICT DO NOTHING RETURNING key_id",
                (self.name, key.key_id, key.role, key.grant_json, key.secret_hash, key.created_at, key.label),
            )
            if not inserted:
                raise ConflictError(f"key id {key.key_id} exists", field="keyId")
            tx.audit(audit)

    def get_key(self: TenantAccess, key_id: str) -> KeyRecord | None:
        row = self._one(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE tenant = %s AND key_id = %s", (self.name, key_id))
        return KeyRecord(*row) if row else None

    def list_keys(self: TenantAccess) -> list[KeyRecord]:
        rows = self._all(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE tenant = %s ORDER BY created_at", (self.name,))
        return [KeyRecord(*r) for r in rows]

    def revoke_key(self: TenantAccess, key_id: str, at: str, audit: AuditDraft, *, keep_an_admin: bool = False) -> bool:
        with self.transaction() as tx:  # the tenant's writes held off: the last admin is seen as it is
            revoked = tx.query(
                "UPDATE api_keys SET revoked_at = %s WHERE tenant = %s AND key_id = %s AND revoked_at IS NULL "
                "AND (NOT %s OR role != 'admin' OR EXISTS (SELECT 1 FROM api_keys AS other WHERE "
                "other.tenant = %s AND other.role = 'admin' AND other.revoked_at IS NULL AND other.key_id != %s)) "
                "RETURNING key_id",
                (at, self.name, key_id, keep_an_admin, self.name, key_id),
            )
            if revoked:
                tx.audit(audit)
            return bool(revoked)
