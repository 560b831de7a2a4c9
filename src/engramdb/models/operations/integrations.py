"""Operations the integrations need (Hermes, LangGraph, Claude Code hooks, ``engramdb.Memory``).

Appended to ``engramdb.models.operations.OPERATIONS``; declared like every other operation.
"""

from __future__ import annotations

from typing import Any

from engramdb.contract.events import ScopeFields
from engramdb.models.operation import Cli, Operation
from engramdb.models.scopes import ScopeResolution

RESOLVE_SCOPE = Operation(
    name="resolve_scope",
    method="POST",
    path="/v1/scope/resolve",
    tag="integrations",
    output=ScopeResolution,
    permission="memory.read",
    body=ScopeFields,
    body_optional=True,
    body_arg="scope",
    example={"privacyScope": "private", "sandboxEligible": False},  # with a host key, add "userId": "user-42"
    summary="Check the key and resolve a scope: a userId becomes its participantScopeHash (the salt stays here).",
    description="Answers the key's tenant, role and grant, and the scope a request naming these fields would "
    "act in (403 naming the field if the key may not name it). A host that knows its users by their own ids "
    "sends userId; the server hashes it with the tenant's secret salt and stores and logs nothing of it. "
    "MemorySession calls it at start, so a wrong key fails there.",
    cli=Cli(("hash-participant",), positional=("userId",), raw={"--hash": "participant_scope_hash"}),
)

INTEGRATION_OPERATIONS: tuple[Operation[Any], ...] = (RESOLVE_SCOPE,)
