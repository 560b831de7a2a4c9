"""Loading and storing a tenant's policy (the document itself is ``engramdb.models.policy``)."""

from __future__ import annotations

from engramdb.contract.canonical import canonical_json, sha256_hex
from engramdb.core.auth import Caller
from engramdb.models.policy import DEFAULT_MULTI_VALUED, TenantPolicy, TrustRule
from engramdb.storage.port import TenantStore

__all__ = ["DEFAULT_MULTI_VALUED", "TenantPolicy", "TrustRule", "load_policy", "save_policy"]


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
