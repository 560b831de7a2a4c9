"""Usage over time: memories by source and status, the review backlog, recalls and their time, model
calls and tokens, as charts drawn by the server (plots.py) from ``usage_series``."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from engramdb import clock
from engramdb.api.routes import authenticated
from engramdb.api.ui import plots
from engramdb.api.ui.common import call, part, render, replace_url
from engramdb.core.auth import Caller
from engramdb.errors import InvalidInputError
from engramdb.models.series import SeriesView, UsageSeries

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
RANGES = {1: "the last day", 7: "the last 7 days", 30: "the last 30 days", 90: "the last 90 days"}
SOURCES = {"EPISODE": "episodes", "MEMORY_FACT": "facts"}


def _named(answer: UsageSeries, metric: str, name: str | None = None) -> list[tuple[str, SeriesView]]:
    found = [s for s in answer.series if s.metric == metric]
    return [(name or _dimension(s.dimension), s) for s in found]


def _dimension(dimension: str) -> str:
    source, _, status = dimension.partition("/")
    return f"{SOURCES.get(source, source)} {status.replace('_', ' ')}".strip() if status else dimension


def charts(answer: UsageSeries) -> list[plots.Chart]:
    """The page's charts, in the order an operator reads them."""
    starts = plots.buckets(answer.since, answer.until, answer.bucket)

    def chart(id: str, title: str, unit: str, series: list[tuple[str, SeriesView]], bars: bool = False) -> plots.Chart:
        return plots.chart(id, title, unit, series, starts, answer.bucket, bars)

    per = "hour" if answer.bucket == "hour" else "day"
    return [
        chart("memories", "Memories held, by kind and status", "memories", _named(answer, "memories")),
        chart(
            "backlog", "Review backlog: facts awaiting a reviewer", "facts", _named(answer, "review_backlog", "pending")
        ),
        chart("recalls", f"Recalls per {per}", "recalls", _named(answer, "recalls", "recalls"), bars=True),
        chart(
            "latency",
            "Recall time on the server",
            "ms",
            _named(answer, "recall_ms_mean", "mean")
            + _named(answer, "recall_ms_p95", "95th percentile (bucket bound)"),
        ),
        chart("model-calls", f"Model calls per {per}, by purpose", "calls", _named(answer, "model_calls"), bars=True),
        chart("model-tokens", f"Model tokens per {per}", "tokens", _named(answer, "model_tokens")),
    ]


@router.get("/ui/part/usage")
@part
def usage(
    request: Request, caller: Authenticated, days: int = 7, bucket: Literal["", "hour", "day"] = ""
) -> HTMLResponse:
    if days not in RANGES:  # a query's "30" is no Literal[30]: checked here, named in the answer
        raise InvalidInputError(f"days is one of {', '.join(map(str, RANGES))}", field="days")
    step = bucket or ("hour" if days <= 7 else "day")
    since = clock.to_text(clock.utc_now() - timedelta(days=days))
    answer = call(request, caller, "usage_series", {"since": since, "bucket": step})
    return render(
        request,
        "usage.html",
        headers=replace_url(request, "usage"),
        answer=answer,
        charts=charts(answer),
        days=days,
        bucket=step,
        ranges=RANGES,
    )
