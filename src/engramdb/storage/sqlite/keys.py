"""A tenant's API keys in its SQLite file: created and revoked with their audit entry, read by id."""

from __future__ import annotations

from engramdb.errors import ConflictError
from engramdb.storage.port import AuditDraft, KeyRecord
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.transaction import SQLiteTransaction

_KEY_COLUMNS = "key_id, role, grant_json, secret_hash, created_at, label, revoked_at"


class SQLiteKeys:
    """Keys (part of ``SQLiteTenantStore``); the secret's hash only, never the secret."""

    _db: Connections

    def create_key(self, key: KeyRecord, audit: AuditDraft) -> None:
        with self._db.write() as conn:
            inserted = conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (key.key_id, key.role, key.grant_json, key.secret_hash, key.created_at, key.label, None),
            )
            if inserted.rowcount != 1:  # as on PostgreSQL: the key's own message, not a driver's
                raise ConflictError(f"key id {key.key_id} exists", field="keyId")
            SQLiteTransaction(conn).audit(audit)

    def get_key(self, key_id: str) -> KeyRecord | None:
        row = self._db.fetchone(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,))
        return KeyRecord(*row) if row else None

    def list_keys(self) -> list[KeyRecord]:
        rows = self._db.fetchall(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at")
        return [KeyRecord(*r) for r in rows]

    def revoke_key(self, key_id: str, at: str, audit: AuditDraft, *, keep_an_admin: bool = False) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL AND (NOT ? "
                "OR role != 'admin' OR EXISTS (SELECT 1 FROM api_keys AS other WHERE other.role = 'admin' "
                "AND other.revoked_at IS NULL AND other.key_id != ?))",
                (at, key_id, keep_an_admin, key_id),
            )
            if cursor.rowcount != 1:
                return False
            SQLiteTransaction(conn).audit(audit)
            return True
