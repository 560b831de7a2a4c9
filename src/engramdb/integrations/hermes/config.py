"""The Hermes provider's settings: ``$HERMES_HOME/engramdb/config.json`` (where Hermes' setup and
dashboard write a flat-JSON provider config), under ``ENGRAM_*`` environment variables (Hermes
keeps secrets such as ENGRAM_KEY in its .env). Reading them needs no network."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG_FIELDS: tuple[dict[str, Any], ...] = (
    {
        "key": "url",
        "description": "EngramDB server URL",
        "required": True,
        "default": "http://127.0.0.1:8377",
        "env_var": "ENGRAM_URL",
    },
    {
        "key": "api_key",
        "description": "EngramDB host key (engram keys create --role host --agent-id hermes --profile-id default)",
        "secret": True,
        "required": True,
        "env_var": "ENGRAM_KEY",
    },
    {"key": "agent_id", "description": "agentId of the memory scope", "default": "hermes"},
    {
        "key": "user_id",
        "description": "the person on the CLI (the server hashes it; gateway sessions use the platform's user id)",
        "default": "",
    },
    {"key": "recall_timeout_ms", "description": "recall budget before each turn (fail-open)", "default": "300"},
    {
        "key": "extraction",
        "description": "have the server's model extract facts from each turn (derived; reviewed by default)",
        "default": "false",
        "choices": ["true", "false"],
    },
)


@dataclass(frozen=True)
class ProviderConfig:
    """What the provider needs, from its config file and the environment."""

    url: str
    api_key: str | None
    agent_id: str
    user_id: str | None
    recall_timeout: float
    extraction: bool

    @classmethod
    def load(cls, hermes_home: str | Path, env: Mapping[str, str] = os.environ) -> ProviderConfig:
        stored = read_config(hermes_home)

        def value(key: str, env_var: str | None, default: str = "") -> str:
            return str(env.get(env_var or "", "") or stored.get(key) or default)

        return cls(
            url=value("url", "ENGRAM_URL", "http://127.0.0.1:8377"),
            api_key=value("api_key", "ENGRAM_KEY") or None,
            agent_id=value("agent_id", "ENGRAM_AGENT_ID", "hermes"),
            user_id=value("user_id", "ENGRAM_USER_ID") or None,
            recall_timeout=float(value("recall_timeout_ms", None, "300")) / 1000,
            extraction=value("extraction", None, "false").lower() in ("true", "1", "yes"),
        )


def config_path(hermes_home: str | Path) -> Path:
    return Path(hermes_home) / "engramdb" / "config.json"


def read_config(hermes_home: str | Path) -> dict[str, Any]:
    path = config_path(hermes_home)
    try:
        loaded = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def write_config(hermes_home: str | Path, values: Mapping[str, Any]) -> Path:
    """Merge non-secret ``values`` into the config file (the key stays in Hermes' .env)."""
    path = config_path(hermes_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = {**read_config(hermes_home), **{k: v for k, v in values.items() if k != "api_key"}}
    path.write_text(json.dumps(merged, indent=2, sort_keys=True), encoding="utf-8")
    path.chmod(0o600)
    return path
