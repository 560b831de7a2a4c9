"""What the integrations call, and the scope they call it in.

A ``Target`` runs an operation: the SDK's ``Client`` against a server, or ``engramdb.embedded``
in this process. ``Scoped`` fixes the scope fields an integration does not vary and turns a user
id into the participant's hash once (the server derives it with the tenant's secret salt), so a
host never makes a hash by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from engramdb.models import operations
from engramdb.models.inputs import build_inputs
from engramdb.models.operation import Operation
from engramdb.models.scopes import ScopeResolution
from engramdb.sdk.client import Client


class Target(Protocol):
    """Where an operation runs."""

    def call(self, op: Operation[Any], inputs: Any) -> Any: ...

    def close(self) -> None: ...


def open_target(
    url: str | None, api_key: str | None, home: str | Path | None = None, tenant: str = "default"
) -> Target:
    """A server's client when ``url`` is given, else EngramDB in this process on the data folder."""
    if url is not None:
        return Client(url, api_key)
    from engramdb.embedded import Embedded  # the server's code, loaded only when asked for

    return Embedded(home, tenant=tenant)


class Scoped:
    """Operations in the scope of one agent and profile, per user (participant) id."""

    def __init__(
        self,
        target: Target,
        *,
        agent_id: str | None,
        profile_id: str | None,
        privacy_scope: str = "private",
        sandbox_eligible: bool = False,
    ) -> None:
        self.target = target
        self.fixed: dict[str, Any] = {k: v for k, v in (("agentId", agent_id), ("profileId", profile_id)) if v}
        self.fixed |= {"privacyScope": privacy_scope, "sandboxEligible": sandbox_eligible}
        self._hashes: dict[str, str] = {}

    def scope(self, user_id: str | None, **overrides: Any) -> dict[str, Any]:
        """The scope fields for ``user_id`` (its hash asked of the server once), with ``overrides``."""
        fields = {**self.fixed, **{k: v for k, v in overrides.items() if v is not None}}
        if user_id is not None:
            if user_id not in self._hashes:
                answer: ScopeResolution = self.call("resolve_scope", {"userId": user_id, **fields}, {})
                assert answer.participant_scope_hash is not None  # a userId always resolves
                self._hashes[user_id] = answer.participant_scope_hash
            fields["participantScopeHash"] = self._hashes[user_id]
        return fields

    @property
    def hashes(self) -> dict[str, str]:
        """The participants' hashes asked so far, by user id."""
        return dict(self._hashes)

    def call(self, name: str, values: dict[str, Any], scope: dict[str, Any] | None = None, **body: Any) -> Any:
        """Run operation ``name`` with wire-named ``values`` in ``scope``."""
        op = operations.BY_NAME[name]  # the registry, imported on the first call
        inputs = build_inputs(op, values, body=body.get("body"), scope=scope if scope is not None else self.fixed)
        return self.target.call(op, inputs)

    def close(self) -> None:
        self.target.close()
