"""``MemoryService``: every operation of EngramDB, independent of the surface that calls it.

The operations live in areas, each a small class over the shared state (``core/shared.py``):
writes, reads, structured fact search, review, admin, scopes, the knowledge plane's record writes,
reads and deletes, erasure, aging, model-assisted memory and its derivations, the change feed and
its webhooks. The service composes them and finds an operation's method by the operation's name
(``engramdb.models.operations`` declares them).
Talks to the storage port and the embedder, never to a driver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engramdb.config import Settings
from engramdb.core.admin import AdminOperations
from engramdb.core.aging.operations import AgingOperations
from engramdb.core.assist.derivations import DerivationOperations
from engramdb.core.assist.operations import AssistOperations
from engramdb.core.changes.feed import ChangeOperations
from engramdb.core.changes.webhooks import WebhookOperations
from engramdb.core.embedding import Embedder
from engramdb.core.erasure import ErasureOperations
from engramdb.core.fact_search import FactSearchOperations
from engramdb.core.knowledge.deleting import KnowledgeDeleting
from engramdb.core.knowledge.reading import KnowledgeReading
from engramdb.core.knowledge.writing import KnowledgeWriting
from engramdb.core.reads import ReadOperations
from engramdb.core.review import ReviewOperations
from engramdb.core.scopes import ScopeOperations
from engramdb.core.series import SeriesOperations
from engramdb.core.shared import Area, Shared
from engramdb.core.writes import WriteOperations
from engramdb.storage.port import Store


class MemoryService:
    """The operations of EngramDB over one store and one embedder, by area."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.shared = Shared(store, embedder, settings)
        self.writes = WriteOperations(self.shared)
        self.reads = ReadOperations(self.shared)
        self.fact_search = FactSearchOperations(self.shared)
        self.review = ReviewOperations(self.shared)
        self.admin = AdminOperations(self.shared)
        self.scopes = ScopeOperations(self.shared)
        self.record_writes = KnowledgeWriting(self.shared)
        self.record_reads = KnowledgeReading(self.shared)
        self.record_deletes = KnowledgeDeleting(self.shared)
        self.erasure = ErasureOperations(self.shared)
        self.aging = AgingOperations(self.shared)
        self.series = SeriesOperations(self.shared)
        self.assist = AssistOperations(self.shared)
        self.derivations = DerivationOperations(self.shared, self.assist, self.writes)
        self.changes = ChangeOperations(self.shared)
        self.webhooks = WebhookOperations(self.shared)
        self._methods = _methods_by_name([area for area in vars(self).values() if isinstance(area, Area)])

    def operation(self, name: str) -> Callable[..., Any]:
        """Return the method that runs the operation called ``name`` (``KeyError`` if none does)."""
        return self._methods[name]


def _methods_by_name(areas: list[Area]) -> dict[str, Callable[..., Any]]:
    methods: dict[str, Callable[..., Any]] = {}
    for area in areas:
        for name in dir(type(area)):
            if not name.startswith("_") and callable(member := getattr(area, name)):
                if name in methods:
                    raise TypeError(f"two areas define {name}: an operation's name must say which one runs it")
                methods[name] = member
    return methods
