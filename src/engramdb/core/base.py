"""What every group of operations shares: the store, the embedder, the settings."""

from __future__ import annotations

import threading
from typing import Protocol

from engramdb import clock
from engramdb.config import Settings
from engramdb.core.anchor import Anchors
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.embedding_cache import QueryVectorCache
from engramdb.core.usage import UsageBuffer
from engramdb.models.aging import JobView
from engramdb.storage.port import Store, TenantStore


class JobBoard(Protocol):
    """What the service shows of the server's background jobs (jobs/supervisor.py has them)."""

    def views(self) -> list[JobView]: ...


class ServiceBase:
    """The state behind the operations; each group (writes, reads, review, admin) extends it."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.queries = QueryVectorCache(embedder, settings.query_cache_size)  # recall's query vectors
        self.settings = settings
        self.written = threading.Event()  # wakes the embedding worker
        self.anchors = Anchors(*settings.anchor_paths())  # the audit chain's heads, outside the database
        self.usage = UsageBuffer()  # recall's hits, written in batches by the usage job
        self.supervisor: JobBoard | None = None  # set by the server that runs the jobs
        self.now = clock.utc_now  # when aging's marks (use, restore) happen; tests move it
        self._backlog_cache: tuple[float, int] = (float("-inf"), 0)  # (when counted, re-embedding backlog)
        self.queued = threading.Event()  # wakes the extraction workers (a model job was queued)

    def _tenant(self, caller: Caller) -> TenantStore:
        return self.store.tenant(caller.tenant)
