"""``engram hermes install``: EngramDB's plugin folder in ``$HERMES_HOME/plugins/engramdb/``.

Hermes discovers memory providers there with its own loader (``plugins.memory``): the folder's
``__init__.py`` registers ``EngramMemoryProvider`` (from this package, which must be importable
in Hermes' Python), ``plugin.yaml`` describes it and ``config_schema.py`` declares its settings
for Hermes' setup and dashboard. Select it with ``memory.provider: engramdb`` in Hermes'
config.yaml (or ``hermes memory setup``).
"""

from __future__ import annotations

import os
from pathlib import Path

from engramdb import __version__

INIT = '''"""EngramDB memory provider for Hermes Agent (written by `engram hermes install`).

Long-term memory with recall before each turn, one episode per turn through a durable outbox,
scope derived from Hermes' metadata. Registers a MemoryProvider; the code is the engramdb package.
"""

from engramdb.integrations.hermes.provider import EngramMemoryProvider


def register(ctx) -> None:
    ctx.register_memory_provider(EngramMemoryProvider())
'''

PLUGIN_YAML = f"""name: engramdb
version: {__version__}
description: "EngramDB: scoped, audited long-term memory (episodes and facts, hybrid recall, durable outbox)."
pip_dependencies:
  - engramdb[hermes]=={__version__}
"""

CONFIG_SCHEMA = '''"""EngramDB's declared config surface, rendered by Hermes' generic provider panel."""

from plugins.memory.config_schema import (
    KIND_SECRET,
    KIND_SELECT,
    KIND_TEXT,
    ProviderConfigSchema,
    ProviderField,
    ProviderFieldOption,
)

CONFIG_SCHEMA = ProviderConfigSchema(
    name="engramdb",
    label="EngramDB",
    fields=(
        ProviderField(key="url", label="Server URL", kind=KIND_TEXT, default="http://127.0.0.1:8377",
                      description="The EngramDB server (engram serve).", env_fallbacks=("ENGRAM_URL",), inline=True),
        ProviderField(key="api_key", label="Host key", kind=KIND_SECRET, env_key="ENGRAM_KEY",
                      description="engram keys create --role host --agent-id hermes --profile-id default",
                      inline=True),
        ProviderField(key="agent_id", label="Agent id", kind=KIND_TEXT, default="hermes",
                      description="agentId of the memory scope (the host key's)."),
        ProviderField(key="user_id", label="User id", kind=KIND_TEXT, default="",
                      description="The person on the CLI; the server hashes it. Gateways use the platform's id."),
        ProviderField(key="recall_timeout_ms", label="Recall budget (ms)", kind=KIND_TEXT, default="300",
                      description="How long recall may take before each turn; no memory past it."),
        ProviderField(key="extraction", label="Extract facts from each turn", kind=KIND_SELECT, default="false",
                      options=(ProviderFieldOption("false", "Off"), ProviderFieldOption("true", "On")),
                      description="The server's model extracts facts (derived; a reviewer approves them by default)."),
    ),
)
'''

FILES = {"__init__.py": INIT, "plugin.yaml": PLUGIN_YAML, "config_schema.py": CONFIG_SCHEMA}


def hermes_home(given: str | Path | None = None) -> Path:
    """Hermes' home: ``given``, else HERMES_HOME, else ~/.hermes (Hermes' own default)."""
    return Path(given or os.environ.get("HERMES_HOME") or Path.home() / ".hermes")


def install(home: str | Path | None = None) -> Path:
    """Write the plugin folder (replacing an earlier one) and return it."""
    folder = hermes_home(home) / "plugins" / "engramdb"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
