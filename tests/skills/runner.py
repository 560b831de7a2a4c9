"""A skill's examples, run in order against a real server, as an agent and an operator would run them.

Shell and Python blocks run as the docs tests run a page (tests/docs/reader.py: a fresh folder whose
``./.engram`` the server serves, one terminal's exports carried from block to block, ``engram`` on
the PATH, no ``ENGRAM_URL``: the operator's commands work on the data folder). MCP calls go through
the mcp package's own client to the server's ``/mcp``, as an agent key of the scope: agent ``coder``,
profile ``default``, participant ``alice`` (the hash ``engram hash-participant alice`` answers),
private, not sandbox-eligible. Before each block the embedding worker is let finish, as it would
between the turns of a real session.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from engramdb import clock, errors
from tests.docs.blocks import Block, Page, missing_output
from tests.docs.reader import Reader
from tests.mcp.helpers import text
from tests.skills.pages import fill, mcp_call

SETTLE_SECONDS = 10.0
# An answer the block after a call shows as "<code>: ..." is an error the example means to show.
ERROR_CODES = {c.code for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.EngramError)}


class SkillRun:
    """Runs a skill's blocks in order; each MCP answer is kept for the placeholders of later blocks."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        reader.env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{reader.env.get('PATH', '')}"
        self.answers: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        alice = subprocess.run(
            ["engram", "hash-participant", "alice", "--hash"],
            cwd=reader.folder,
            env=reader.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        grant = {
            "agentId": "coder",
            "profileId": "default",
            "privacyScope": "private",
            "participantScopeHash": alice,
            "sandboxEligible": False,
        }
        self.key = reader.server.key(tenant="default", role="agent", **grant)

    def run(self, page: Page) -> None:
        for block in page.blocks:
            call = mcp_call(block)
            if call is not None:
                self._settle()
                self.call(block, *call)
            elif block.runs:
                self._settle()
                self.reader.run(dataclasses.replace(block, code=fill(block.code, self.answers)))

    def call(self, block: Block, tool: str, arguments: dict[str, Any]) -> str:
        """Call the tool; fail unless it answers as the block after it shows (an error only if shown)."""
        filled = {k: _filled(v, self.answers) for k, v in arguments.items()}
        failed, said, structured = anyio.run(self._call, tool, filled)
        self.calls.append(tool)
        shown = block.output or ""
        shows_error = shown.split(":", 1)[0] in ERROR_CODES
        assert failed == shows_error, f"{block}: {tool} {'failed' if failed else 'did not fail'}: {said}"
        if not failed and structured is not None:
            self.answers[tool] = structured
        missing = missing_output(shown, said)
        assert missing is None, f"{block}: {tool} did not answer {missing!r}:\n{said}"
        return said

    async def _call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any] | None]:
        headers = {"Authorization": f"Bearer {self.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(f"{self.reader.server.url}/mcp", http_client=http)) as client:
                result = await client.call_tool(tool, arguments)
        return result.is_error, text(result), result.structured_content

    def _settle(self) -> None:
        tenant = self.reader.server.store.tenant("default")
        deadline = time.monotonic() + SETTLE_SECONDS
        while tenant.embedding_jobs(1, clock.now_text()) or tenant.record_embedding_jobs(1, clock.now_text()):
            assert time.monotonic() < deadline, "the embedding worker did not finish"
            time.sleep(0.02)


def _filled(value: Any, answers: dict[str, dict[str, Any]]) -> Any:
    if isinstance(value, str):
        return fill(value, answers)
    if isinstance(value, list):
        return [_filled(v, answers) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, answers) for k, v in value.items()}
    return value
