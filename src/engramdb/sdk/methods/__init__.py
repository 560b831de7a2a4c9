"""Typed SDK methods, one per operation, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

from __future__ import annotations

from engramdb.sdk.methods.aging import AsyncAgingMethods, SyncAgingMethods
from engramdb.sdk.methods.assist import AsyncAssistMethods, SyncAssistMethods
from engramdb.sdk.methods.feed import AsyncFeedMethods, SyncFeedMethods
from engramdb.sdk.methods.governance import AsyncGovernanceMethods, SyncGovernanceMethods
from engramdb.sdk.methods.integrations import AsyncIntegrationsMethods, SyncIntegrationsMethods
from engramdb.sdk.methods.knowledge import AsyncKnowledgeMethods, SyncKnowledgeMethods
from engramdb.sdk.methods.lifecycle import AsyncLifecycleMethods, SyncLifecycleMethods
from engramdb.sdk.methods.memory import AsyncMemoryMethods, SyncMemoryMethods

__all__ = ["AsyncMethods", "SyncMethods"]


class SyncMethods(
    SyncMemoryMethods,
    SyncLifecycleMethods,
    SyncGovernanceMethods,
    SyncKnowledgeMethods,
    SyncAgingMethods,
    SyncAssistMethods,
    SyncIntegrationsMethods,
    SyncFeedMethods,
):
    """Every operation as a blocking method (``Client``)."""


class AsyncMethods(
    AsyncMemoryMethods,
    AsyncLifecycleMethods,
    AsyncGovernanceMethods,
    AsyncKnowledgeMethods,
    AsyncAgingMethods,
    AsyncAssistMethods,
    AsyncIntegrationsMethods,
    AsyncFeedMethods,
):
    """Every operation as a coroutine method (``AsyncClient``)."""
