"""Usage over time on both backends: recalls counted into their hour, memories by source and status
kept as gauges, written by the usage job into usage_hourly and read back by ``usage_series``; and
an archive audited with the state digests ``engram audit verify`` holds the row to."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engramdb import clock
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.errors import InvalidInputError
from engramdb.models.aging import ArchiveRequest
from engramdb.models.recall import RecallRequest
from engramdb.models.series import UsageSeries, UsageSeriesQuery
from tests.factories import episode_body, fact_body, scope_fields

SCOPE = scope_fields()


def _series(answer: UsageSeries, metric: str, dimension: str = "") -> float:
    """The sum (a counter) or the last value (a gauge) of one series, 0 when it is absent."""
    found = [s for s in answer.series if s.metric == metric and s.dimension == dimension]
    if not found or not found[0].points:
        return 0.0
    points = [p.value for p in found[0].points]
    return sum(points) if found[0].kind == "counter" else points[-1]


def test_recalls_and_memories_are_kept_over_time(service: MemoryService, operator: Caller) -> None:
    for turn, text in enumerate(["Deploy billing on Fridays.", "Staging lives in Frankfurt."]):
        body = episode_body(text, turn=turn, scope=SCOPE, observedAt=clock.now_text())
        service.writes.write_episode(operator, EpisodeWrite.model_validate(body))
    service.writes.write_fact(operator, FactWrite.model_validate(fact_body("The user edits in vim.", scope=SCOPE)))
    query = UsageSeriesQuery.model_validate({"bucket": "hour"})
    before = service.series.usage_series(operator, query)
    assert _series(before, "recalls") == 0  # the positive control below counts three
    for _ in range(3):
        service.reads.recall(operator, RecallRequest.model_validate({"query": "billing", "scope": SCOPE}))
    service.shared.usage.flush(service.shared.store)
    service.shared.usage.count_memories(service.shared.store, clock.utc_now())
    after = service.series.usage_series(operator, query)
    assert _series(after, "recalls") == 3
    assert _series(after, "memories", "EPISODE/active") == 2
    assert _series(after, "memories", "MEMORY_FACT/active") == 1
    daily = service.series.usage_series(operator, UsageSeriesQuery.model_validate({"bucket": "day"}))
    assert _series(daily, "recalls") == 3  # the same recalls, summed by day


def test_a_range_past_93_days_is_refused_naming_since(service: MemoryService, operator: Caller) -> None:
    now = clock.utc_now()
    fine = {"since": clock.to_text(now - timedelta(days=90)), "until": clock.to_text(now)}
    assert service.series.usage_series(operator, UsageSeriesQuery.model_validate(fine)).bucket == "hour"
    too_long = {**fine, "since": clock.to_text(now - timedelta(days=94))}
    with pytest.raises(InvalidInputError) as refused:
        service.series.usage_series(operator, UsageSeriesQuery.model_validate(too_long))
    assert refused.value.field == "since"


def test_an_archived_fact_still_verifies(service: MemoryService, operator: Caller) -> None:
    fact = service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body("The user is on payments.", scope=SCOPE))
    )
    assert service.admin.verify_audit(operator).verified
    body = ArchiveRequest.model_validate({"reason": "team changed", "scope": SCOPE})
    assert service.aging.archive_fact(operator, fact.memory.id, body).status == "archived"
    verdict = service.admin.verify_audit(operator)
    assert verdict.verified and verdict.problem is None, verdict  # the archive's entry holds the row as left
    tenant = service.shared.store.tenant(operator.tenant)  # the control: restored behind the audit's back
    row = tenant.get_memory(auth.scope_key(auth.resolve_scope(operator, SCOPE)), "MEMORY_FACT", fact.memory.id)
    assert row is not None
    with tenant.transaction() as tx:
        tx.set_status(row.rowid, status="active", reason=None, retired_at=None)
    assert service.admin.verify_audit(operator).row_id == fact.memory.id
