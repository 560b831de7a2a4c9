"""The job supervisor on an injected clock (no sleeps): when each job runs, what it reports, and
that a failing job keeps its error and its schedule; and the aging job over a real store."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from engramdb import clock
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.jobs.supervisor import Job, Supervisor, server_jobs
from engramdb.models.memories import FactQuery
from tests.factories import fact_body, scope_fields

START = datetime(2030, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def test_jobs_run_when_due_and_not_before() -> None:
    tick, seen = Clock(), []

    def counting(now: datetime) -> Mapping[str, int]:
        seen.append(now)
        return {"done": len(seen)}

    supervisor = Supervisor([Job("counting", 60, counting)], now=tick)
    assert supervisor.run_due() == ["counting"]  # due at start
    tick.advance(59)
    assert supervisor.run_due() == []
    tick.advance(1)
    assert supervisor.run_due() == ["counting"]
    (view,) = supervisor.views()
    assert (view.runs, view.counts, view.last_error) == (2, {"done": 2}, None)
    assert view.last_run_at == clock.to_text(START + timedelta(seconds=60))
    assert view.next_run_at == clock.to_text(START + timedelta(seconds=120))
    assert seen == [START, START + timedelta(seconds=60)]


def test_a_failing_job_keeps_its_error_and_its_schedule() -> None:
    tick, fail = Clock(), [True]

    def flaky(_: datetime) -> Mapping[str, int]:
        if fail[0]:
            raise RuntimeError("disk on fire")
        return {"ok": 1}

    supervisor = Supervisor([Job("flaky", 10, flaky), Job("steady", 10, lambda _: {"ok": 1})], now=tick)
    assert supervisor.run_due() == ["flaky", "steady"], "one job's failure does not stop the others"
    flaky_view = supervisor.views()[0]
    assert flaky_view.last_error == "RuntimeError: disk on fire" and flaky_view.runs == 1
    assert flaky_view.next_run_at == clock.to_text(START + timedelta(seconds=10))
    fail[0] = False
    tick.advance(10)
    supervisor.run_due()
    assert supervisor.views()[0].last_error is None and supervisor.views()[0].counts == {"ok": 1}


def test_the_aging_job_sweeps_every_tenant_on_its_schedule(service: MemoryService, operator: Caller) -> None:
    scope = scope_fields()
    fact = service.writes.write_fact(
        operator, FactWrite.model_validate(fact_body("The user owns a kayak", kind="boat", scope=scope))
    ).memory.id
    tick = Clock()
    tick.now = clock.utc_now() + timedelta(days=50)
    supervisor = Supervisor(
        server_jobs(service.shared.store, service.shared.usage, aging_seconds=86_400, usage_seconds=5), now=tick
    )
    supervisor.run_due()
    aging = next(v for v in supervisor.views() if v.name == "aging")
    assert aging.counts["archived"] == 0 and aging.counts["tenants"] == 1
    tick.advance(86_400 * 60)  # day 110: weak and old
    assert supervisor.run_due() == ["usage", "aging", "copies"]
    aging = next(v for v in supervisor.views() if v.name == "aging")
    assert aging.counts["archived"] == 1 and aging.runs == 2
    facts = service.reads.list_facts(operator, FactQuery.model_validate({**scope, "includeHistory": True})).facts
    assert [(f.id, f.status) for f in facts] == [(fact, "archived")]
