"""Recording which memories recall used, and how long recalls took, without a write per recall.

Recall notes its hits and its time here (in memory, under a lock); the supervisor's ``usage`` job
writes them in a few batched statements per tenant every few seconds: the hits as use counts
(they tune decay), the times as hourly counters (usage over time, ``usage_series``). The same job
reads each tenant's memories by source and status every few minutes into that hour's gauges. A
crash loses at most that window: counts are tuned and charted, they are not data.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from engramdb import clock
from engramdb.storage.port import Store
from engramdb.storage.rows import HourValue

log = logging.getLogger(__name__)
# A recall's time falls in the first bucket whose bound (ms) is not below it; p95 is read from them.
RECALL_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000)
SNAPSHOT_SECONDS = 300.0  # how often each tenant's memories are counted into the hour's gauges


def hour_of(moment: datetime) -> str:
    """The hour ``moment`` falls in, as the series store keys it: ``YYYY-MM-DDTHH`` (UTC)."""
    return clock.to_text(moment)[:13]


def bucket_of(ms: float) -> str:
    """The latency bucket a recall of ``ms`` milliseconds is counted in (its bound, or ``inf``)."""
    return next((str(bound) for bound in RECALL_BUCKETS_MS if ms <= bound), "inf")


@dataclass
class _Recalls:
    """One tenant's recalls in one hour, not yet written."""

    count: int = 0
    total_ms: float = 0.0
    buckets: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def values(self, hour: str) -> list[HourValue]:
        found = [HourValue(hour, "recalls", "", float(self.count)), HourValue(hour, "recall_ms", "", self.total_ms)]
        found += [HourValue(hour, "recall_ms_bucket", b, float(n)) for b, n in sorted(self.buckets.items())]
        return found


class UsageBuffer:
    """Recall hits and times waiting to be written: (tenant, rowid) -> (times, last at), and
    (tenant, hour) -> that hour's recalls."""

    def __init__(self, max_rows: int = 100_000) -> None:
        self._pending: dict[tuple[str, int], tuple[int, str]] = {}
        self._recalls: dict[tuple[str, str], _Recalls] = {}
        self._counted: dict[str, datetime] = {}  # tenant -> when its memories were last counted
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

    def note_recall(self, tenant: str, ms: float, at: datetime) -> None:
        """Count one recall of ``ms`` milliseconds in the hour of ``at``."""
        with self._lock:
            tally = self._recalls.setdefault((tenant, hour_of(at)), _Recalls())
            tally.count += 1
            tally.total_ms += ms
            tally.buckets[bucket_of(ms)] += 1

    def unwritten(self, tenant: str) -> list[HourValue]:
        """The recall counters of ``tenant`` not written yet (a read adds them to what is stored)."""
        with self._lock:
            return [v for (t, hour), tally in self._recalls.items() if t == tenant for v in tally.values(hour)]

    def flush(self, store: Store) -> int:
        """Write every pending use count and recall counter; return how many memory rows were updated."""
        with self._lock:
            pending, self._pending = self._pending, {}
            recalls, self._recalls = self._recalls, {}
        by_tenant: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for (tenant, rowid), (times, at) in pending.items():
            by_tenant[tenant].append((rowid, times, at))
        for tenant, uses in by_tenant.items():
            store.tenant(tenant).aging.record_use(uses)
        counters: dict[str, list[HourValue]] = defaultdict(list)
        for (tenant, hour), tally in recalls.items():
            counters[tenant] += tally.values(hour)
        for tenant, values in counters.items():
            store.tenant(tenant).usage.add(values)
        return len(pending)

    def count_memories(self, store: Store, now: datetime) -> int:
        """Read the memories of every tenant not counted in the last few minutes into the hour's
        gauges; return how many tenants were counted."""
        done = 0
        for name in store.tenant_names():
            last = self._counted.get(name)
            if last is not None and (now - last).total_seconds() < SNAPSHOT_SECONDS:
                continue
            tenant = store.tenant(name)
            tenant.usage.put(memory_gauges(tenant.usage.memory_counts(), hour_of(now)))
            self._counted[name] = now
            done += 1
        return done


def memory_gauges(counts: Sequence[tuple[str, str, int]], hour: str) -> list[HourValue]:
    """The gauges of one hour from memories counted by source and status (the review backlog too)."""
    gauges = [HourValue(hour, "memories", f"{source}/{status}", float(n)) for source, status, n in counts]
    pending = sum(n for source, status, n in counts if source == "MEMORY_FACT" and status == "pending_review")
    return [*gauges, HourValue(hour, "review_backlog", "", float(pending))]
