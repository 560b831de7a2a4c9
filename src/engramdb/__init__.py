"""EngramDB: long-term memory for LLM agents.

The SDK names below are imported on first use, so that ``import engramdb`` (the server, the
CLI) does not pay for httpx and the client models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from engramdb import errors
    from engramdb.contract.canonical import hash_scope
    from engramdb.errors import EngramError, UnavailableError
    from engramdb.integrations.mem0 import AsyncMemory, Memory
    from engramdb.sdk import AsyncClient, Client, HostContext, MemorySession, Outbox, OutboxFullError

_LAZY = {
    "AsyncClient": "engramdb.sdk",
    "Client": "engramdb.sdk",
    "HostContext": "engramdb.sdk",
    "MemorySession": "engramdb.sdk",
    "Outbox": "engramdb.sdk",
    "OutboxFullError": "engramdb.sdk",
    "EngramError": "engramdb.errors",
    "UnavailableError": "engramdb.errors",
    "Memory": "engramdb.integrations.mem0",
    "AsyncMemory": "engramdb.integrations.mem0",
    "hash_scope": "engramdb.contract.canonical",
}

__all__ = [
    "AsyncClient",
    "AsyncMemory",
    "Client",
    "EngramError",
    "HostContext",
    "Memory",
    "MemorySession",
    "Outbox",
    "OutboxFullError",
    "UnavailableError",
    "__version__",
    "errors",
    "hash_scope",
]


def __getattr__(name: str) -> Any:
    if name == "errors":
        return import_module("engramdb.errors")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'engramdb' has no attribute {name!r}")
