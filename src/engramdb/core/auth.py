"""API keys, roles and scope grants: the only place a request's scope is derived.

A key belongs to one tenant and binds some of the five scope fields:

- ``agent``: all five (one participant of one agent); requests may omit the scope;
- ``host``: at least ``agentId`` and ``profileId``; each request names the other three, which
  the host derived from its own authenticated users;
- ``reviewer``: reads and review decisions anywhere in its tenant;
- ``admin``: everything in its tenant, keys included.

A request that names a value outside its key's grant is refused (403), never rewritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from engramdb import clock
from engramdb.audit_chain.states import key_digest
from engramdb.contract.bounds import check_caps
from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.contract.events import Scope
from engramdb.errors import (
    AuthenticationError,
    AuthorizationError,
    ConflictError,
    InternalError,
    InvalidInputError,
    NotFoundError,
)
from engramdb.storage.port import (
    AuditDraft,
    KeyRecord,
    ScopeColumns,
    Store,
    TenantStore,
    check_tenant_name,
)

Role = Literal["agent", "host", "reviewer", "admin"]
ROLES: tuple[str, ...] = get_args(Role)
SCOPE_FIELDS = ("agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible")
_REQUIRED_GRANT = {"agent": SCOPE_FIELDS, "host": ("agentId", "profileId")}
# Reviewer and admin keys act tenant-wide (the review queue, the audit log, tombstones, exports, keys):
# a grant on one would be honoured by some routes and not others, so they take none.
_UNBOUND_ROLES = ("reviewer", "admin")
_TOKEN_PREFIX = "egm"


@dataclass(frozen=True)
class Permission:
    """Which roles may do something, and the action as a refusal names it."""

    action: str  # completes "<role> keys may not ..."
    roles: frozenset[str]


# Which roles may do what. Everything not listed is refused.
PERMISSIONS: dict[str, Permission] = {
    "memory.write": Permission("write memories", frozenset({"agent", "host", "admin"})),
    "memory.read": Permission("read memories", frozenset({"agent", "host", "reviewer", "admin"})),
    "keys.manage": Permission("manage keys", frozenset({"admin"})),
    "webhooks.manage": Permission("manage webhooks", frozenset({"admin"})),
    "policy.write": Permission("change the policy", frozenset({"admin"})),
    "participant.forget": Permission("forget a participant", frozenset({"admin"})),
    "participant.export": Permission("export a participant's data", frozenset({"admin"})),
    # A person's marks: the agent's own key (a model) may not pin, protect or archive its memories.
    "memory.mark": Permission(
        "pin memories, set their importance or archive them", frozenset({"host", "reviewer", "admin"})
    ),
    "jobs.read": Permission("read the background jobs", frozenset({"reviewer", "admin"})),
    "jobs.run": Permission("run a background job now", frozenset({"admin"})),
    "audit.read": Permission("read the audit log", frozenset({"reviewer", "admin"})),
    "review.read": Permission("read the review queue", frozenset({"reviewer", "admin"})),
    "review.decide": Permission("decide reviews", frozenset({"reviewer", "admin"})),
    "tombstone.lift": Permission("lift tombstones", frozenset({"reviewer", "admin"})),
}


@dataclass(frozen=True)
class Caller:
    """An authenticated key: who is asking, in which tenant, with which grant."""

    tenant: str
    key_id: str
    role: str
    grant: dict[str, Any] = field(default_factory=dict)
    operator: bool = False  # the machine's operator on the data folder (the CLI), not a key

    @property
    def key_name(self) -> str:
        """The key's name across tenants (``key_name``): what limits and lanes count by."""
        return key_name(self.tenant, self.key_id)

    def audit(self, action: str, **fields: Any) -> AuditDraft:
        """Return an audit draft attributed to this caller."""
        return AuditDraft(action=action, actor_key_id=self.key_id, actor_role=self.role, **fields)


def bearer_token(authorization: str) -> str | None:
    """The token an ``Authorization: Bearer …`` header carries (None for any other header)."""
    return authorization[7:].strip() if authorization.lower().startswith("bearer ") else None


def key_name(tenant: str, key_id: str) -> str:
    """A key's name across tenants, ``<tenant>.<keyId>``, as its token spells it."""
    return f"{tenant}.{key_id}"


def require(caller: Caller, permission: str) -> None:
    """Raise AuthorizationError unless the caller's role has ``permission``."""
    allowed = PERMISSIONS[permission]
    if caller.role not in allowed.roles:
        raise AuthorizationError(f"{caller.role} keys may not {allowed.action}", role=caller.role)


def resolve_scope(caller: Caller, named: dict[str, Any]) -> Scope:
    """Return the full scope of a request: the key's grant plus what the request names.

    Raises AuthorizationError if a named value differs from the grant, InvalidInputError if a
    field is neither granted nor named. A ``userId`` must have been hashed first (the service's
    ``Shared.scope``): left here it would be ignored, and the request would act in the grant's scope.
    """
    if "userId" in named:
        raise InternalError("a userId reached resolve_scope unhashed: resolve scopes through Shared.scope")
    resolved = merged_scope(caller, named)
    for name in SCOPE_FIELDS:
        if name not in resolved:
            raise InvalidInputError(f"{name} is required: {caller.role} keys do not fix it", field=name)
    return Scope.model_validate(resolved)


def merged_scope(caller: Caller, named: dict[str, Any]) -> dict[str, Any]:
    """Return the scope fields known for a request: the key's grant plus what it names (some may
    be missing). Raises AuthorizationError if a named value differs from the grant."""
    resolved: dict[str, Any] = {}
    for name in SCOPE_FIELDS:
        bound, asked = caller.grant.get(name), named.get(name)
        if bound is not None and asked is not None and asked != bound:
            # A participant's hash is not repeated: the server may have made it from a userId with the
            # tenant's secret salt, which no key may learn to compute through a refusal.
            shown = "" if name == "participantScopeHash" else f"={asked!r}"
            raise AuthorizationError(f"this key is not granted {name}{shown}", field=name, role=caller.role)
        value = bound if bound is not None else asked
        if value is not None:
            resolved[name] = value
    return resolved


SCOPE_COLUMNS = {  # each scope field, by the column (and ScopeColumns attribute) that stores it
    "agentId": "agent_id",
    "profileId": "profile_id",
    "privacyScope": "privacy_scope",
    "participantScopeHash": "participant_scope_hash",
    "sandboxEligible": "sandbox_eligible",
}


def may_name(caller: Caller, scope: ScopeColumns) -> bool:
    """True when every scope field the caller's key is bound to has this scope's value."""
    return all(
        getattr(scope, SCOPE_COLUMNS[name]) == bound for name, bound in caller.grant.items() if name in SCOPE_COLUMNS
    )


def grant_columns(caller: Caller) -> dict[str, Any]:
    """The scope columns the caller's key is bound to and their values: ``may_name`` as a listing
    of scopes filters in storage."""
    return {SCOPE_COLUMNS[k]: v for k, v in caller.grant.items() if k in SCOPE_COLUMNS}


def scope_key(scope: Scope) -> str:
    """Return the digest that identifies a scope in storage."""
    return sha256_hex(canonical_json(scope.wire()))


def scope_columns(scope: Scope) -> ScopeColumns:
    """Return the scope as the storage layer stores it."""
    return ScopeColumns(
        scope_key=scope_key(scope),
        agent_id=scope.agent_id,
        profile_id=scope.profile_id,
        privacy_scope=scope.privacy_scope,
        participant_scope_hash=scope.participant_scope_hash,
        sandbox_eligible=scope.sandbox_eligible,
    )


def validate_grant(role: str, grant: dict[str, Any]) -> dict[str, Any]:
    """Return a clean grant for ``role`` or raise InvalidInputError naming what is wrong."""
    if role not in ROLES:
        raise InvalidInputError(f"role must be one of {', '.join(ROLES)}", field="role")
    grant = {k: v for k, v in grant.items() if v is not None}
    unknown = set(grant) - set(SCOPE_FIELDS)
    if unknown:
        raise InvalidInputError(f"unknown grant field {sorted(unknown)[0]}", field=sorted(unknown)[0])
    if role in _UNBOUND_ROLES and grant:
        raise InvalidInputError(_unbound(role), field="grant")
    for name in _REQUIRED_GRANT.get(role, ()):
        if name not in grant:
            raise InvalidInputError(f"{role} keys must be bound to {name}", field=name)
    for name in ("agentId", "profileId"):
        if name in grant and not str(grant[name]).strip():
            raise InvalidInputError(f"{name} must not be blank", field=name)
    check_caps(grant)  # the same caps as a write's: a grant's values are written on every memory
    # Validate each bound value with the contract's own rules.
    probe = {
        "agentId": "x",
        "profileId": "x",
        "privacyScope": "private",
        "participantScopeHash": "0" * 64,
        "sandboxEligible": False,
    } | grant
    try:
        Scope.model_validate(probe)
    except ValueError as error:
        raise InvalidInputError(f"invalid grant: {error}", field="grant") from error
    return grant


def _unbound(role: str) -> str:
    return (
        f"{role} keys act on every scope of their tenant and take no grant; "
        "bind a host or an agent key to scope fields instead"
    )


def _digest(secret: str) -> str:
    # Secrets are 256 random bits, so one SHA-256 is enough; no password hashing needed.
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(
    store: Store,
    *,
    tenant: str,
    role: str,
    grant: dict[str, Any],
    label: str | None = None,
    actor: Caller | None = None,
    create_tenant: bool = False,
) -> tuple[str, KeyRecord]:
    """Create a key and return ``(token, record)``; the token is shown once, never stored.

    The tenant must exist (NotFoundError otherwise) unless ``create_tenant``: a misspelt name
    must not quietly start a new tenant.
    """
    check_tenant_name(tenant)
    grant = validate_grant(role, grant)
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = KeyRecord(
        key_id=key_id,
        role=role,
        grant_json=json.dumps(grant, sort_keys=True),
        secret_hash=_digest(secret),
        created_at=clock.now_text(),
        label=label,
    )
    draft = AuditDraft(
        action="key.create",
        actor_key_id=actor.key_id if actor else None,
        actor_role=actor.role if actor else "operator",
        target_kind="api_key",
        target_id=key_id,
        after_digest=key_digest(record),
    )
    store.tenant(tenant, create=create_tenant).create_key(record, draft)
    return f"{_TOKEN_PREFIX}.{key_name(tenant, key_id)}.{secret}", record


def revoke_key(store: Store, *, tenant: str, key_id: str, actor: Caller | None = None) -> bool:
    """Revoke a key; return False if it was unknown or already revoked.

    A key (``actor``) may not revoke its tenant's last active admin key (ConflictError): nobody
    could manage keys over REST after it. The operator (no actor) may, and can create another.
    """
    keys = store.tenant(tenant)
    if actor is not None and _active_admins(keys) == [key_id]:
        raise _last_admin(key_id)
    at, record = clock.now_text(), keys.get_key(key_id)
    draft = AuditDraft(
        action="key.revoke",
        actor_key_id=actor.key_id if actor else None,
        actor_role=actor.role if actor else "operator",
        target_kind="api_key",
        target_id=key_id,
        before_digest=None if record is None else key_digest(record),
        after_digest=None if record is None else key_digest(replace(record, revoked_at=at)),
    )
    # Checked again in the revoke's own write: two admin keys revoking each other at one instant both
    # passed the check above, and left the tenant with none.
    revoked = keys.revoke_key(key_id, at, draft, keep_an_admin=actor is not None)
    if not revoked and actor is not None and _active_admins(keys) == [key_id]:
        raise _last_admin(key_id)
    return revoked


def _last_admin(key_id: str) -> ConflictError:
    return ConflictError(
        f"key {key_id} is the tenant's last active admin key; create another admin key first", field="keyId"
    )


def _active_admins(keys: TenantStore) -> list[str]:
    return [k.key_id for k in keys.list_keys() if k.role == "admin" and k.revoked_at is None]


def authenticate(store: Store, token: str | None) -> Caller:
    """Return the caller a bearer token belongs to, or raise AuthenticationError."""
    if not token:
        raise AuthenticationError("missing bearer key (Authorization: Bearer egm.…)")
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != _TOKEN_PREFIX:
        raise AuthenticationError("malformed key")
    _, tenant, key_id, secret = parts
    try:
        record = store.tenant(tenant).get_key(key_id)
    except (InvalidInputError, NotFoundError):  # an unknown tenant is an unknown key
        record = None
    if record is None or not hmac.compare_digest(record.secret_hash, _digest(secret)):
        raise AuthenticationError("unknown key")
    if record.revoked_at is not None:
        raise AuthenticationError("this key was revoked")
    grant = json.loads(record.grant_json)
    if record.role in _UNBOUND_ROLES and grant:  # made before such grants were refused: not honoured everywhere
        raise AuthenticationError(f"this key is refused: {_unbound(record.role)} (revoke it and create another)")
    return Caller(tenant=tenant, key_id=key_id, role=record.role, grant=grant)
