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
        named = body.named_scope_fields() if body else {}
        user_id = named.pop("userId", None)
        if user_id is not None:
            if "participantScopeHash" in named:
                self.shared.scope(caller, {**named, "userId": user_id})  # raises: the participant named twice
            named["participantScopeHash"] = self.shared.participant_hash(caller, user_id)
        scope = auth.merged_scope(caller, named)
        return ScopeResolution(
            tenant=caller.tenant,
            key_id=caller.key_id,
            role=caller.role,
            grant=caller.grant,
            scope=scope,
            participant_scope_hash=scope.get("participantScopeHash"),
            complete=len(scope) == len(auth.SCOPE_FIELDS),
        )
