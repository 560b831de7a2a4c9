"""Running a tenant: its keys, its policy, its audit log, and the server's health."""

from __future__ import annotations

import base64
import binascii
import json
import time

from engramdb import __version__, clock
from engramdb.contract.canonical import is_sha256_hex
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.policy import load_policy, save_policy
from engramdb.core.shared import Area, Shared
from engramdb.core.verification import verify_tenant
from engramdb.core.views import audit_view, key_view, scope_summary
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.admin import (
    AuditPage,
    AuditQuery,
    AuditVerdict,
    Health,
    KeyCreated,
    KeyCreateRequest,
    KeyList,
)
from engramdb.models.policy import TenantPolicy
from engramdb.models.scopes import ScopeList, ScopeListQuery
from engramdb.storage.port import AuditFilter, ScopeOrder, ScopePosition, TenantStore

BACKLOG_SECONDS = 30.0


def stale_backlog(tenant: TenantStore, model: str) -> int:
    """Memories and record texts of one tenant whose vector another model made (``engram reembed``'s work)."""
    return tenant.aging.stale_count(model) + tenant.aging.stale_record_count(model)


class AdminOperations(Area):
    """Keys, policy, the audit log and health."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self._backlog_cache: tuple[float, int] = (float("-inf"), 0)  # (when counted, re-embedding backlog)

    def health(self) -> Health:
        return Health(
            status="ok",
            version=__version__,
            embedder=self.shared.embedder.model_id,
            storage=self.shared.settings.storage_url().split(":", 1)[0],
            reembed_backlog=self._backlog(),
        )

    def _backlog(self) -> int:
        """Rows of every tenant with another model's vector; counted at most every 30 s (a scan)."""
        counted_at, count = self._backlog_cache
        if time.monotonic() - counted_at > BACKLOG_SECONDS:
            count = sum(
                stale_backlog(self.shared.store.tenant(name), self.shared.embedder.model_id)
                for name in self.shared.store.tenant_names()
            )
            self._backlog_cache = (time.monotonic(), count)
        return count

    def audit(self, caller: Caller, query: AuditQuery) -> AuditPage:
        auth.require(caller, "audit.read")
        filt = AuditFilter(query.action, query.target_id, query.actor_key_id)
        entries = self.shared.tenant(caller).audit_entries(query.after, query.limit, filt)
        return AuditPage(
            entries=[audit_view(e) for e in entries],
            next_after=entries[-1].seq if len(entries) == query.limit else None,
        )

    def verify_audit(self, caller: Caller) -> AuditVerdict:
        """Recompute the tenant's chain from its first entry, hold it to its anchors outside the
        database, and check every stored row against what was written; name the first fault."""
        auth.require(caller, "audit.read")
        return verify_tenant(caller.tenant, self.shared.tenant(caller), self.shared.anchors)

    def list_scopes(self, caller: Caller, query: ScopeListQuery) -> ScopeList:
        """The tenant's scopes that hold memories and that the key may name, a page at a time (its
        grant filters in storage: a key of one scope reads none of the others)."""
        auth.require(caller, "memory.read")
        bound = auth.grant_columns(caller)
        if set(auth.SCOPE_FIELDS) <= set(caller.grant):  # a key of one scope: found by its key
            bound["scope_key"] = auth.scope_key(auth.resolve_scope(caller, {}))
        if query.scope_key is not None and bound.setdefault("scope_key", query.scope_key) != query.scope_key:
            return ScopeList(scopes=[])  # not the key's own scope
        after = None if query.cursor is None else _scope_position(query.cursor, query.order)
        page = self.shared.tenant(caller).scope_stats(bound, order=query.order, after=after, limit=query.limit)
        cursor = None if page.following is None else _scope_cursor(query.order, page.following)
        named = [scope_summary(s) for s in page.scopes if auth.may_name(caller, s.scope)]
        return ScopeList(scopes=named, next_cursor=cursor)

    def get_policy(self, caller: Caller) -> TenantPolicy:
        auth.require(caller, "memory.read")
        return load_policy(self.shared.tenant(caller))

    def put_policy(self, caller: Caller, body: TenantPolicy) -> TenantPolicy:
        auth.require(caller, "policy.write")
        return save_policy(self.shared.tenant(caller), body, caller)

    def create_key(self, caller: Caller, body: KeyCreateRequest) -> KeyCreated:
        """Create a key in the caller's tenant; the token is in the answer, once."""
        auth.require(caller, "keys.manage")
        token, record = auth.create_key(
            self.shared.store,
            tenant=caller.tenant,
            role=body.role,
            grant=body.grant.named_scope_fields(),
            label=body.label,
            actor=None if caller.operator else caller,
        )
        return KeyCreated(key=token, **key_view(record).model_dump())

    def list_keys(self, caller: Caller) -> KeyList:
        auth.require(caller, "keys.manage")
        return KeyList(keys=[key_view(k) for k in self.shared.tenant(caller).list_keys()])

    def revoke_key(self, caller: Caller, key_id: str) -> None:
        """Revoke a key. A key may not revoke its tenant's last admin key; the operator may."""
        auth.require(caller, "keys.manage")
        actor = None if caller.operator else caller
        if not auth.revoke_key(self.shared.store, tenant=caller.tenant, key_id=key_id, actor=actor):
            raise NotFoundError(f"no active key {key_id} in tenant {caller.tenant}", field="keyId")


def _scope_cursor(order: ScopeOrder, last: ScopePosition) -> str:
    """Where a page of scopes ended, in its order: the last one's last write and key (both shown)."""
    return base64.urlsafe_b64encode(json.dumps(["scopes", order, last.at, last.scope_key]).encode()).decode()


def _scope_position(cursor: str, order: ScopeOrder) -> ScopePosition:
    try:
        named, made_in, at, key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if (named, made_in) != ("scopes", order) or not clock.is_canonical(at) or not is_sha256_hex(key):
            raise ValueError("not a cursor of scopes in this order")
        return ScopePosition(at, key)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidInputError(
            "cursor is not one this server gave (pass nextCursor as it came)", field="cursor"
        ) from None
