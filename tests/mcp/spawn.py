"""Spawning `engram mcp` over stdio against a data folder seeded and checked from this process."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.base import ScopeQuery
from engramdb.models.memories import MemoryView
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, fact_body, participant, scope_fields

TENANT = "t1"
ALICE = scope_fields()  # coder / default / private / alice / not sandbox-eligible
BOB = scope_fields(participantScopeHash=participant("bob"))
OPERATOR = Caller(tenant=TENANT, key_id="test-operator", role="admin")


class Home:
    """The data folder the spawned server works on, opened here as the operator."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store = SQLiteStore(path)
        self.store.tenant(TENANT, create=True)
        self.service = MemoryService(self.store, HashingEmbedder(), Settings(home=path, embedder="hashing"))

    def fact(self, text: str, scope: dict[str, Any], **extra: Any) -> str:
        body = FactWrite.model_validate(fact_body(text, scope=scope, **extra))
        return self.service.writes.write_fact(OPERATOR, body).id

    def episode(self, user: str, scope: dict[str, Any], **extra: Any) -> str:
        body = EpisodeWrite.model_validate(episode_body(user, scope=scope, **extra))
        return self.service.writes.write_episode(OPERATOR, body).id

    def get(self, fact_id: str, scope: dict[str, Any]) -> MemoryView:
        return self.service.reads.get_memory(OPERATOR, "MEMORY_FACT", fact_id, ScopeQuery.model_validate(scope))

    def embed(self) -> None:
        drain(self.store.tenant(TENANT), HashingEmbedder())


def serve(home: Home, scope: dict[str, Any], body: Callable[[Client], Awaitable[None]], mode: str = "auto") -> None:
    """Spawn `engram mcp` fixed to ``scope`` and run ``body`` against it (``legacy``: handshake)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "engramdb.cli",
            "mcp",
            "--tenant",
            TENANT,
            "--agent-id",
            scope["agentId"],
            "--profile-id",
            scope["profileId"],
            "--participant",
            scope["participantScopeHash"],
            "--privacy",
            scope["privacyScope"],
            "--sandbox-eligible",
            str(scope["sandboxEligible"]).lower(),
        ],
        env={"ENGRAM_HOME": str(home.path), "ENGRAM_EMBEDDER": "hashing"},
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60, mode=mode) as client:
            await body(client)

    anyio.run(main)
