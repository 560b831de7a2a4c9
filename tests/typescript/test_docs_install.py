"""docs/integrations.md's OpenClaw install steps, run word for word in a temporary OpenClaw home (with
OpenClaw's Node and the ``openclaw`` command on PATH, as the page assumes); then a turn lands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engramdb.devtools.node import WORKSPACE
from engramdb_bench.scripted_chat import ScriptedChat
from tests.conftest import LiveServer
from tests.docs.blocks import read
from tests.typescript.openclaw_home import OpenClawHome
from tests.typescript.test_openclaw import _episodes


def _openclaw_blocks() -> list[str]:
    """The bash blocks of the page's OpenClaw section, in order."""
    page = read("docs/integrations.md")
    text = (Path(__file__).resolve().parents[2] / "docs/integrations.md").read_text(encoding="utf-8")
    start = text.index("\n## OpenClaw\n")
    end = text.index("\n## ", start + 1)
    first_line, last_line = text[:start].count("\n") + 2, text[:end].count("\n") + 1
    return [b.code for b in page.blocks if b.language == "bash" and first_line <= b.line <= last_line]


@pytest.mark.timeout(900)
def test_the_pages_install_steps_install_a_plugin_that_remembers(
    workspace: dict[str, str], server: LiveServer, tmp_path: Path
) -> None:
    build, install = _openclaw_blocks()
    assert build.startswith("cd clients/typescript\n")  # what the workspace fixture did (npm ci, npm run build)
    key = server.key(role="host", agentId="main", profileId="default")
    chat = ScriptedChat(lambda messages: "Noted.")
    try:
        home = OpenClawHome(tmp_path / "openclaw", chat.url)
        env = home.env() | {
            "PATH": f"{WORKSPACE / 'node_modules/.bin'}:{home.env()['PATH']}",
            "ENGRAM_API_KEY": key,
        }
        script = install.replace("127.0.0.1:8377", server.url.removeprefix("http://"))
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script],
            cwd=WORKSPACE,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        config = home.config()
        assert config["plugins"]["slots"]["memory"] == "engramdb"
        assert "apiKey" not in config["plugins"]["entries"]["engramdb"]["config"]  # no secret in openclaw.json

        done = subprocess.run(
            [
                "openclaw",
                "agent",
                "--local",
                "--to",
                "carol",
                "--session-key",
                "agent:main:direct:carol-1",
                "--message",
                "I moved to Lisbon last spring.",
                "--json",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )  # the turn is the test's, not the page's
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert [e["event"]["userText"] for e in _episodes(server, key, "carol")] == ["I moved to Lisbon last spring."]
    finally:
        chat.close()
