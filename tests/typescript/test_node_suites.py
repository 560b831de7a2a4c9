"""The TypeScript packages' own tests (node's test runner), run against a live EngramDB server: the
contract fixture, and the plugin's adapter conformance matrix, every row a test (contract and facts,
authorization, capture, recall, delivery with host kill mid-delivery and the server down for a whole
session, and each lifecycle hook fired by OpenClaw's own hook names; docs/integrations.md maps them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engramdb.devtools.node import node
from tests.conftest import LiveServer


@pytest.mark.parametrize(
    "files",
    [
        ["packages/client/test/conformance.test.ts", "packages/client/test/client.test.ts"],
        [
            "packages/openclaw-engramdb/test/authorization.test.ts",
            "packages/openclaw-engramdb/test/capture.test.ts",
            "packages/openclaw-engramdb/test/delivery.test.ts",
            "packages/openclaw-engramdb/test/facts.test.ts",
            "packages/openclaw-engramdb/test/kill.test.ts",
            "packages/openclaw-engramdb/test/lifecycle.test.ts",
        ],
    ],
    ids=["client", "openclaw-plugin"],
)
def test_node_suite(workspace: dict[str, str], server: LiveServer, files: list[str], tmp_path: Path) -> None:
    key = server.key(role="host", agentId="main", profileId="default")
    # The suites' temp folders (outboxes, transcripts) go under this test's own folder, which pytest prunes.
    done = node("--test", "--test-reporter=spec", *files, ENGRAM_URL=server.url, ENGRAM_KEY=key, TMPDIR=str(tmp_path))
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    passed = re.search(r"ℹ pass (\d+)", report)
    assert passed and int(passed.group(1)) >= len(files) and re.search(r"ℹ fail 0\b", report), report[-3000:]
