"""Recording which memories recall used, without a write per recall.

Recall notes its hits here (in memory, under a lock); the supervisor's ``usage`` job writes them
in one batched statement per tenant every few seconds. A crash loses at most that window of use
counts: they tune decay, they are not data.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Sequence

from engramdb.storage.port import Store

log = logging.getLogger(__name__)


class UsageBuffer:
    """Recall hits waiting to be written: (tenant, rowid) -> (times, last at)."""

    def __init__(self, max_rows: int = 100_000) -> None:
        self._pending: dict[tuple[str, int], tuple[int, str]] = {}
        self._lock = threading.Lock()
        self._max_rows = max_rows

    def note(self, tenant: str, rowids: Sequence[int], at: str) -> None:
        """Count one use of each row (a full buffer drops the note: counts tune, they are not data)."""
        with self._lock:
            for rowid in rowids:
                key = (tenant, rowid)
                times, _ = self._pending.get(key, (0, at))
                if times == 0 and len(self._pending) >= self._max_rows:
                    log.debug("usage buffer full; a recall's use is not counted")
                    return
                self._pending[key] = (times + 1, at)

    def flush(self, store: Store) -> int:
        """Write every pending count; return how many rows were updated."""
        with self._lock:
            pending, self._pending = self._pending, {}
        by_tenant: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for (tenant, rowid), (times, at) in pending.items():
            by_tenant[tenant].append((rowid, times, at))
        for tenant, uses in by_tenant.items():
            store.tenant(tenant).aging.record_use(uses)
        return len(pending)
