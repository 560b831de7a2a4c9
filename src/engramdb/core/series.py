"""Usage over time: the hourly readings the usage job keeps, summed or sampled into hours or days.

Stored hours come from ``usage_hourly`` (recalls and their time, memories by source and status)
and from the model-call ledger; recalls not written yet and the memories held now are added, so
the current hour is never behind.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from engramdb import clock
from engramdb.core import auth
from engramdb.core.aging.usage import RECALL_BUCKETS_MS, hour_of, memory_gauges
from engramdb.core.auth import Caller
from engramdb.core.shared import Area
from engramdb.errors import InvalidInputError
from engramdb.models.series import Bucket, SeriesPoint, SeriesView, UsageSeries, UsageSeriesQuery
from engramdb.storage.rows import HourValue

MAX_SPAN = timedelta(days=93)
GAUGES = ("memories", "review_backlog")
STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
_BUCKETS = "recall_ms_bucket"


class SeriesOperations(Area):
    """The tenant's usage over time."""

    def usage_series(self, caller: Caller, query: UsageSeriesQuery) -> UsageSeries:
        auth.require(caller, "audit.read")
        now = self.shared.now()
        until = clock.parse(query.until) if query.until else now
        since = clock.parse(query.since) if query.since else until - timedelta(days=7)
        if since >= until or until - since > MAX_SPAN:
            raise InvalidInputError("since must be before until, at most 93 days apart", field="since")
        first, end = _floor(since, query.bucket), _floor(until, query.bucket) + STEP[query.bucket]
        usage = self.shared.tenant(caller).usage
        values = usage.hours(hour_of(first), hour_of(end)) + usage.model_hours(hour_of(first), hour_of(end))
        values += [v for v in self.shared.usage.unwritten(caller.tenant) if hour_of(first) <= v.hour < hour_of(end)]
        if first <= now < end:  # the memories held now stand for the current hour
            values += memory_gauges(usage.memory_counts(), hour_of(now))
        return UsageSeries(
            bucket=query.bucket,
            since=clock.to_text(first),
            until=clock.to_text(end),
            series=bucketed(values, query.bucket),
        )


def _floor(moment: datetime, bucket: Bucket) -> datetime:
    moment = moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if bucket == "day" else moment


def _start(hour: str, bucket: Bucket) -> str:
    return f"{hour[:10]}T00:00:00.000000Z" if bucket == "day" else f"{hour}:00:00.000000Z"


def bucketed(values: Iterable[HourValue], bucket: Bucket) -> list[SeriesView]:
    """Series of hourly values in buckets: counters summed, gauges at their last hour; the
    recalls' mean and 95th percentile time derived from their counters."""
    sums: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    last: dict[tuple[str, str], dict[str, tuple[str, float]]] = defaultdict(dict)
    for v in values:
        at, key = _start(v.hour, bucket), (v.metric, v.dimension)
        if v.metric in GAUGES:
            if at not in last[key] or last[key][at][0] <= v.hour:  # a later reading (or the live one) wins
                last[key][at] = (v.hour, v.value)
        else:
            sums[key][at] += v.value
    series = [
        _series(m, d, "gauge", {at: value for at, (_, value) in points.items()}) for (m, d), points in last.items()
    ]
    series += [_series(m, d, "counter", points) for (m, d), points in sums.items() if m not in ("recall_ms", _BUCKETS)]
    series += _latency(sums)
    return sorted(series, key=lambda s: (s.metric, s.dimension))


def _series(metric: str, dimension: str, kind: str, points: dict[str, float]) -> SeriesView:
    ordered = [SeriesPoint(at=at, value=round(value, 3)) for at, value in sorted(points.items())]
    return SeriesView(metric=metric, dimension=dimension, kind=kind, points=ordered)  # type: ignore[arg-type]


def _latency(sums: dict[tuple[str, str], dict[str, float]]) -> list[SeriesView]:
    counts, total = sums.get(("recalls", ""), {}), sums.get(("recall_ms", ""), {})
    mean = {at: total.get(at, 0.0) / n for at, n in counts.items() if n}
    p95 = {at: _percentile(sums, at, 0.95) for at, n in counts.items() if n}
    return [_series("recall_ms_mean", "", "derived", mean), _series("recall_ms_p95", "", "derived", p95)]


def _percentile(sums: dict[tuple[str, str], dict[str, float]], at: str, share: float) -> float:
    """The bound of the latency bucket that holds the ``share`` quantile of the bucket's recalls."""
    bounds = [*(str(b) for b in RECALL_BUCKETS_MS), "inf"]
    counts = [sums.get((_BUCKETS, b), {}).get(at, 0.0) for b in bounds]
    seen, needed = 0.0, share * sum(counts)
    for bound, count in zip(bounds, counts, strict=True):
        seen += count
        if count and seen >= needed:
            return float(bound) if bound != "inf" else float(RECALL_BUCKETS_MS[-1])
    return 0.0
