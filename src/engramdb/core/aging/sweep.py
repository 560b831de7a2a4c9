"""The aging sweep of one tenant: archive what the policy says is weak and old, erase what is past
retention. Every change is audited as ``system``; erasures are scrubbed from the files after.

Reads in pages, writes one transaction per page; each row is checked again inside the
transaction (it may have been superseded, pinned or used since it was read).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from engramdb import clock
from engramdb.core.aging.decay import Decision, decide
from engramdb.core.facts import state_digest
from engramdb.core.policy import load_policy
from engramdb.models.policy import TenantPolicy
from engramdb.storage.port import AgingRow, AuditDraft, MemoryRecord, TenantStore

log = logging.getLogger(__name__)
PAGE = 500


@dataclass(frozen=True)
class SweepCounts:
    """What one sweep of one tenant did."""

    weighed: int = 0
    archived: int = 0
    erased_episodes: int = 0
    erased_facts: int = 0

    def __add__(self, other: SweepCounts) -> SweepCounts:
        return SweepCounts(
            self.weighed + other.weighed,
            self.archived + other.archived,
            self.erased_episodes + other.erased_episodes,
            self.erased_facts + other.erased_facts,
        )


def _system(action: str, row: AgingRow, reason: str, after: MemoryRecord | None = None) -> AuditDraft:
    return AuditDraft(
        action=action,
        actor_key_id=None,
        actor_role="system",
        target_kind=row.source,
        target_id=row.memory_id,
        scope_key=row.scope_key,
        after_digest=None if after is None else state_digest(after),
        reason=reason,
    )


def sweep(tenant: TenantStore, now: datetime) -> SweepCounts:
    """Archive and enforce retention in one tenant as of ``now``; return what was done."""
    with tenant.aging.maintenance():  # a tenant's every memory is weighed: longer than a request may take
        policy = load_policy(tenant)
        counts = archive(tenant, policy, now) + enforce_retention(tenant, policy, now)
    if counts.archived or counts.erased_episodes or counts.erased_facts:
        log.info("aging sweep: %s", counts)
    return counts


def archive(tenant: TenantStore, policy: TenantPolicy, now: datetime) -> SweepCounts:
    """Archive the active memories the policy finds weak and old."""
    cutoff = clock.to_text(now - timedelta(days=policy.aging.archive_after_days))
    weighed, archived, after = 0, 0, 0
    while rows := tenant.aging.active_rows(cutoff, after_rowid=after, limit=PAGE):
        after, weighed = rows[-1].rowid, weighed + len(rows)
        doomed = [(row, d) for row in rows if (d := decide(row, policy.aging, now)).archive]
        if doomed:
            archived += _archive(tenant, doomed, clock.to_text(now))
    return SweepCounts(weighed=weighed, archived=archived)


def _archive(tenant: TenantStore, doomed: Sequence[tuple[AgingRow, Decision]], at: str) -> int:
    done = 0
    with tenant.transaction() as tx:
        for row, decision in doomed:
            current = tx.get_memory(row.scope_key, row.source, row.memory_id)  # type: ignore[arg-type]
            if current is None or current.status != "active" or tx.marks(row.rowid)[0]:
                continue  # changed since it was read: weighed again next time
            archived = tx.set_status(row.rowid, status="archived", reason=decision.reason, retired_at=at)
            tx.audit(_system("memory.archive", row, decision.reason, archived))
            done += 1
    return done


def enforce_retention(tenant: TenantStore, policy: TenantPolicy, now: datetime) -> SweepCounts:
    """Erase episodes (and facts, if the policy says) older than the tenant keeps them."""
    erased = {"EPISODE": 0, "MEMORY_FACT": 0}
    for source, days in (("EPISODE", policy.retention.episode_days), ("MEMORY_FACT", policy.retention.fact_days)):
        if days is None:
            continue
        before = clock.to_text(now - timedelta(days=days))
        while rows := tenant.aging.expired_rows(source, before, limit=PAGE):
            erased[source] += _erase(tenant, rows, f"older than the tenant's retention of {days:g} days")
    if erased["EPISODE"] or erased["MEMORY_FACT"]:
        tenant.scrub()
    return SweepCounts(erased_episodes=erased["EPISODE"], erased_facts=erased["MEMORY_FACT"])


def _erase(tenant: TenantStore, rows: Sequence[AgingRow], why: str) -> int:
    by_scope: dict[str, list[AgingRow]] = defaultdict(list)
    for row in rows:
        by_scope[row.scope_key].append(row)
    gone = 0
    with tenant.transaction() as tx:
        for scope_key, scoped in by_scope.items():
            gone += tx.delete_memory_rows(scope_key, scoped)
            tx.audit_many([_system("memory.retention", row, why) for row in scoped])
    return gone
