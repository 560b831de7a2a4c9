"""Usage over time: a tenant's memories, recalls, review backlog and model calls, per hour or day."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engramdb.contract.events import DateTime
from engramdb.models.base import QueryModel, ResponseModel

Bucket = Literal["hour", "day"]


class UsageSeriesQuery(QueryModel):
    """Which stretch of time to read, and in which steps."""

    since: DateTime | None = Field(None, description="from this time (default: 7 days before until)")
    until: DateTime | None = Field(None, description="up to this time (default: now)")
    bucket: Bucket = Field("hour", description="one point per hour or per day (UTC)")


class SeriesPoint(ResponseModel):
    """One bucket's value."""

    at: str = Field(description="the bucket's start (UTC)")
    value: float = Field(description="the value (a count, milliseconds or tokens)")


class SeriesView(ResponseModel):
    """One series: a metric, split by one dimension."""

    metric: str = Field(
        description="memories (held, by source/status), review_backlog (facts awaiting review), recalls (count), "
        "recall_ms_mean and recall_ms_p95 (server time of a recall), model_calls (by purpose), model_tokens "
        "(prompt/completion)"
    )
    dimension: str = Field("", description="e.g. EPISODE/active for memories, extract for model_calls")
    kind: Literal["gauge", "counter", "derived"] = Field(
        description="gauge: the level at the bucket's last reading; counter: the bucket's sum; derived: "
        "computed from the bucket's counters (a recall's mean and 95th percentile time)"
    )
    points: list[SeriesPoint] = Field(description="the buckets that have a value, oldest first")


class UsageSeries(ResponseModel):
    """A tenant's usage over time, from the hourly readings the server keeps."""

    bucket: Bucket = Field(description="hour or day")
    since: str = Field(description="the first bucket's start")
    until: str = Field(description="the end of the last bucket")
    series: list[SeriesView] = Field(description="every series with a value in the stretch")
