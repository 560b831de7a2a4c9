"""Typed SDK methods, one per operation, generated from ``engramdb.models.operations``.

Do not edit: run ``python -m engramdb.devtools.generate`` after changing the registry.
"""

from __future__ import annotations

from engramdb.sdk.methods.aging import AsyncAgingMethods, SyncAgingMethods
from engramdb.sdk.methods.governance import AsyncGovernanceMethods, SyncGovernanceMethods
from engramdb.sdk.methods.knowledge import AsyncKnowledgeMethods, SyncKnowledgeMethods
from engramdb.sdk.methods.memory import AsyncMemoryMethods, SyncMemoryMethods
from engramdb.sdk.methods.models import AsyncModelsMethods, SyncModelsMethods

__all__ = ["AsyncMethods", "SyncMethods"]


class SyncMethods(
    SyncMemoryMethods,
    SyncGovernanceMethods,
    SyncKnowledgeMethods,
    SyncAgingMethods,
    SyncModelsMethods,
):
    """Every operation as a blocking method (``Client``)."""


class AsyncMethods(
    AsyncMemoryMethods,
    AsyncGovernanceMethods,
    AsyncKnowledgeMethods,
    AsyncAgingMethods,
    AsyncModelsMethods,
):
    """Every operation as a coroutine method (``AsyncClient``)."""
