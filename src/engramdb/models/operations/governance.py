"""Running a tenant: the audit log and its verification, the policy, the keys."""

from __future__ import annotations

from engramdb.models.admin import AuditPage, AuditQuery, AuditVerdict, KeyCreated, KeyCreateRequest, KeyList
from engramdb.models.operation import Cli, Operation
from engramdb.models.policy import TenantPolicy
from engramdb.models.scopes import ScopeList, ScopeListQuery

AUDIT = Operation(
    name="audit",
    method="GET",
    path="/v1/audit",
    tag="audit",
    output=AuditPage,
    permission="audit.read",
    query=AuditQuery,
    summary="The tenant's hash-chained audit log, in order (reviewer or admin keys).",
    cli=Cli(("audit", "list")),
)

VERIFY_AUDIT = Operation(
    name="verify_audit",
    method="GET",
    path="/v1/audit/verify",
    tag="audit",
    output=AuditVerdict,
    permission="audit.read",
    summary="Recompute the tenant's audit chain and name its first broken entry (reviewer or admin keys).",
    description="Reads the whole chain: an entry whose content no longer matches its hash (edited), whose "
    "prevHash does not match the entry before it, or that is missing, breaks it from there on. Then holds the "
    "chain to its anchors outside the database, and every stored row that decides what a read returns or who "
    "may read it (memories, records, relationships, keys, the policy) to the last audit entry about it: the "
    "first row that is not what the audit says is named, with the field classes that differ. No anchor file, "
    "or a torn anchor line, is a warning in the verdict, not a failure.",
    cli=Cli(("audit", "verify"), fails_unless="verified"),
)

LIST_SCOPES = Operation(
    name="list_scopes",
    method="GET",
    path="/v1/scopes",
    tag="scopes",
    output=ScopeList,
    permission="memory.read",
    query=ScopeListQuery,
    summary="The tenant's scopes that hold memories and that the key may name, with counts.",
    description="An agent key sees its one scope, a host key the scopes of its agent and profile, reviewer "
    "and admin keys every scope of the tenant. A scope is listed once it holds a memory, most recently "
    "written first, a page at a time: pass nextCursor as cursor for the next page.",
    cli=Cli(("scopes", "list")),
)

GET_POLICY = Operation(
    name="get_policy",
    method="GET",
    path="/v1/policy",
    tag="policy",
    output=TenantPolicy,
    permission="memory.read",
    summary="The tenant's policy: trust table, multi-valued kinds, what a tombstoned value does.",
    cli=Cli(("policy", "get")),
)

PUT_POLICY = Operation(
    name="put_policy",
    method="PUT",
    path="/v1/policy",
    tag="policy",
    output=TenantPolicy,
    permission="policy.write",
    body=TenantPolicy,
    body_arg="policy",
    example={"multiValuedKinds": ["likes", "note"], "tombstonePolicy": "refuse"},
    summary="Replace the tenant's policy (admin keys only; audited).",
    cli=Cli(("policy", "set"), merge_from="get_policy"),
)

CREATE_KEY = Operation(
    name="create_key",
    method="POST",
    path="/v1/keys",
    tag="keys",
    output=KeyCreated,
    permission="keys.manage",
    body=KeyCreateRequest,
    status=201,
    errors=(404,),
    example={
        "role": "agent",
        "label": "support bot",
        "grant": {
            "agentId": "support",
            "profileId": "default",
            "privacyScope": "private",
            "participantScopeHash": "a" * 64,
            "sandboxEligible": False,
        },
    },
    summary="Create a key in the caller's tenant (admin keys only); the token is shown once.",
    cli=Cli(("keys", "create"), tenant="on_request"),
)

LIST_KEYS = Operation(
    name="list_keys",
    method="GET",
    path="/v1/keys",
    tag="keys",
    output=KeyList,
    permission="keys.manage",
    summary="Every key of the caller's tenant (admin keys only); secrets are never returned.",
    cli=Cli(("keys", "list")),
)

REVOKE_KEY: Operation[None] = Operation(
    name="revoke_key",
    method="DELETE",
    path="/v1/keys/{key_id}",
    tag="keys",
    output=None,
    permission="keys.manage",
    path_params={"key_id": "the key's id"},
    errors=(404, 409),
    summary="Revoke a key of the caller's tenant (admin keys only; not the tenant's last admin key).",
    cli=Cli(("keys", "revoke"), done="revoked {key_id}"),
)
