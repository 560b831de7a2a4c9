"""A tenant's policy document: which kinds hold many values, what a tombstoned value does."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.core.auth import Caller
from engramdb.models.api import ResponseModel
from engramdb.storage.port import TenantStore

DEFAULT_MULTI_VALUED = ["likes", "dislikes", "note", "interest", "skill", "goal", "event"]


class TenantPolicy(ResponseModel):
    """Per-tenant policy (``GET``/``PUT /v1/policy``); defaults apply until an admin sets one."""

    multi_valued_kinds: list[str] = Field(
        default_factory=lambda: list(DEFAULT_MULTI_VALUED),
        description="kinds whose facts coexist; every other kind holds one current value per subject",
    )
    tombstone_policy: Literal["refuse", "review"] = Field(
        "refuse",
        description="re-asserting a tombstoned value: 'refuse' (409) or 'review' (parked pending_review)",
    )

    def is_multi_valued(self, kind: str) -> bool:
        return kind in self.multi_valued_kinds


def load_policy(tenant: TenantStore) -> TenantPolicy:
    """Return the tenant's policy, or the defaults."""
    stored = tenant.get_policy()
    return TenantPolicy.model_validate_json(stored) if stored else TenantPolicy()


def save_policy(tenant: TenantStore, policy: TenantPolicy, caller: Caller) -> TenantPolicy:
    """Store a policy (audited with the digest of its content)."""
    document = canonical_json(policy.wire())
    tenant.set_policy(
        document,
        caller.audit("policy.set", target_kind="policy", after_digest=sha256_hex(document)),
    )
    return policy
