"""The slot reads a fact write makes in SQL (storage/slots.py) answer what their definitions over
every version of the slot answer, on both backends (PostgreSQL compares the times bytewise too):
slots of random versions, out of order, some with a validUntil, some refused or kept as history,
probed at every time they use and between them. And a write into a slot costs the same however many
versions the slot holds (SQLite's steps, never a time): at 10,000 each write read every one, about
60 ms inside the tenant's write lock (a hunt's script, session 46)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError
from engramdb.storage.port import MemoryRecord
from engramdb.storage.rows import AuditDraft
from engramdb.storage.sqlite.store import SQLiteStore
from engramdb.storage.sqlite.tenant import SQLiteTenantStore
from tests.factories import fact_body, scope_fields

SCOPE = scope_fields()


def _end(fact: MemoryRecord) -> str | None:
    ends = [t for t in (fact.valid_until, fact.invalid_at) if t]
    return min(ends) if ends else None


def _holds(fact: MemoryRecord) -> bool:
    end = _end(fact)
    return fact.valid_from is not None and (end is None or end > fact.valid_from)


def _write_slot(service: MemoryService, caller: Caller, rng: random.Random, kind: str) -> int:
    written = 0
    for n in range(40):
        extra: dict[str, Any] = {}
        if rng.random() < 0.25:
            extra["validUntil"] = f"2026-01-{rng.randint(5, 28):02d}T00:00:00Z"
        valid_from = f"2026-01-{rng.randint(1, 20):02d}T{rng.choice(['00', '06', '12']):s}:00:00Z"
        body = fact_body(
            f"{kind} value {rng.randint(0, 12)}", subject="user", kind=kind, scope=SCOPE, validFrom=valid_from, **extra
        )
        body["sourceEventId"] = f"{kind}-{n}"
        try:
            service.writes.write_fact(caller, FactWrite.model_validate(body))
            written += 1
        except EngramError:  # a validUntil before its validFrom, a tombstoned value: refused, as may be
            pass
    return written


def test_the_slot_reads_answer_what_their_definitions_do(service: MemoryService, operator: Caller) -> None:
    rng = random.Random(43)
    tenant, scope_key = service.shared.store.tenant("t1"), _scope_key(service)
    found = {"covering": 0, "next": 0, "later": 0}  # positive controls: each read finds something somewhere
    for kind in ("mood", "task", "city"):
        assert _write_slot(service, operator, rng, kind) > 10
        with tenant.transaction() as tx:
            everything = tx.slot_facts(scope_key, "user", kind, ("active", "superseded", "expired"))
            assert len(everything) > 10
            times = sorted({t for f in everything for t in (f.valid_from, f.valid_until, f.invalid_at) if t})
            probes = times + [t[:-1] + "1Z" for t in times] + ["2025-12-31T00:00:00Z", "2026-02-01T00:00:00Z"]
            checked = 0
            for fact in everything:
                for at in [*rng.sample(probes, 8), fact.valid_from or ""]:
                    if not at:
                        continue
                    covering = tx.covering(scope_key, "user", kind, start=at, but=fact.rowid)
                    nxt = tx.next_start(scope_key, "user", kind, after=at, but=fact.rowid)
                    assert covering == [
                        f
                        for f in everything
                        if f.rowid != fact.rowid
                        and f.status != "active"
                        and _holds(f)
                        and (f.valid_from or "") <= at
                        and ((_end(f) or "") > at or _end(f) is None)
                    ], (kind, at)
                    assert nxt == min(
                        (
                            f.valid_from or ""
                            for f in everything
                            if f.rowid != fact.rowid and _holds(f) and (f.valid_from or "") > at
                        ),
                        default=None,
                    ), (kind, at)
                    later = tx.retired_after(
                        scope_key,
                        "user",
                        kind,
                        valid_from=at,
                        recorded_at=fact.recorded_at,
                        but=fact.memory_id,
                    )
                    assert later == [
                        f
                        for f in everything
                        if f.status != "active"
                        and f.memory_id != fact.memory_id
                        and ((f.valid_from or ""), f.recorded_at) > (at, fact.recorded_at)
                    ], (kind, at)
                    checked += 1
                    found["covering"] += bool(covering)
                    found["next"] += nxt is not None
                    found["later"] += bool(later)
            assert checked > 100
    assert min(found.values()) > 10, found


def _scope_key(service: MemoryService) -> str:
    from engramdb.core import auth

    caller = Caller(tenant="t1", key_id="probe", role="agent", grant=SCOPE)
    return auth.scope_key(service.shared.scope(caller, {}))


@pytest.mark.parametrize(
    ("indexed", "expiring"),
    [(True, False), (True, True), (False, False)],
    ids=["indexed", "indexed-each-value-expired", "control-without-the-indexes"],
)
def test_a_write_into_a_slot_costs_the_same_however_many_versions_it_holds(
    settings: Settings, indexed: bool, expiring: bool
) -> None:
    """Each value said a minute after the last; ``expiring``: each valid for 30 s and swept as expired
    before the next (such a version ends at its validUntil, with no successor's end)."""
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    caller = Caller(tenant="t1", key_id="k", role="agent", grant=SCOPE)
    tenant = store.tenant("t1", create=True)
    assert isinstance(tenant, SQLiteTenantStore)
    written = iter(range(1_000))
    sweeper = AuditDraft(action="fact.expire", actor_key_id=None, actor_role="system")

    def write() -> None:
        n = next(written)
        at = f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00Z"
        until = {"validUntil": at.replace(":00Z", ":30Z")} if expiring else {}
        body = fact_body(f"status {n}", kind="status", scope=SCOPE, validFrom=at, sourceEventId=f"turn-{n}", **until)
        assert service.writes.write_fact(caller, FactWrite.model_validate(body)).outcome in ("created", "superseded")
        if expiring:
            assert tenant.expire_due("2027-01-01T00:00:00.000000Z", sweeper) == 1

    def steps_of_a_write() -> int:
        count = 0

        def tick() -> int:
            nonlocal count
            count += 1
            return 0

        tenant._db._writer.set_progress_handler(tick, 1)
        try:
            write()
        finally:
            tenant._db._writer.set_progress_handler(None, 1)
        return count

    try:
        if not indexed:  # what an earlier version's file had: the reads still answer, over every version
            with tenant._db.write() as conn:
                conn.execute("DROP INDEX memories_slot_starts")
                conn.execute("DROP INDEX memories_slot_ends")
        for _ in range(20):
            write()
        small = steps_of_a_write()
        for _ in range(300):
            write()
        large = steps_of_a_write()
        expired = tenant._db.fetchone("SELECT count(*) FROM memories WHERE status = 'expired' AND invalid_at IS NULL")
    finally:
        store.close()
    assert expired[0] == (322 if expiring else 0)  # the shape asked for: every value swept
    if indexed:
        assert large < small + 300, (small, large)  # B-tree depth and the audit log's growth only
    else:
        assert large > small + 300 * 10, (small, large)  # the control: every version read again, by each read
