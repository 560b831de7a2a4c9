"""Resolving a caller's scope for hosts that name participants by their own ids."""

from __future__ import annotations

from engramdb.contract.events import ScopeFields
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.shared import Area
from engramdb.models.scopes import ScopeResolution


class ScopeOperations(Area):
    """Who a key is and which scope it would act in."""

    def resolve_scope(self, caller: Caller, body: ScopeFields | None = None) -> ScopeResolution:
        auth.require(caller, "memory.read")
        scope = auth.merged_scope(caller, self.shared.hashed(caller, body.named_scope_fields() if body else {}))
        return ScopeResolution(
            tenant=caller.tenant,
            key_id=caller.key_id,
            role=caller.role,
            grant=caller.grant,
            scope=scope,
            participant_scope_hash=scope.get("participantScopeHash"),
            complete=len(scope) == len(auth.SCOPE_FIELDS),
        )
