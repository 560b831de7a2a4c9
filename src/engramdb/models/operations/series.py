"""Usage over time (declared like every other operation; ``operations.OPERATIONS`` lists it)."""

from __future__ import annotations

from engramdb.models.operation import Cli, Operation
from engramdb.models.series import UsageSeries, UsageSeriesQuery

USAGE_SERIES = Operation(
    name="usage_series",
    method="GET",
    path="/v1/usage/series",
    tag="usage",
    output=UsageSeries,
    permission="audit.read",
    query=UsageSeriesQuery,
    summary="The tenant's memories, recalls and their time, review backlog and model calls over time (reviewer "
    "or admin keys).",
    description="Per hour or day, from the hourly readings the server keeps: the usage job adds recalls and their "
    "time every few seconds and counts memories by source and status every few minutes; model calls and tokens "
    "are summed from the model-call ledger. Hours before the server kept readings have none.",
    cli=Cli(("usage",)),
)
