"""Property: whatever is written, corrected and deleted in whichever scopes, each scope's agent key
reads exactly its scope's changes from the feed (never another's), each host key exactly its
agent's, and the admin all of them — on both backends.

The expectation is counted from the operations played, not read back from the store: a write is
one ``created``, a fact that replaces its slot's current value one ``superseded`` more, a delete
one ``deleted``. Positive control: every scope that was written to shows its changes to its key.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.service import MemoryService
from engramdb.models.erasure import DeleteMemoryQuery
from engramdb.storage.port import Store
from tests.changes.test_feed import feed
from tests.factories import episode_body, fact_body, participant, scope_fields

# Four scopes, each differing from the first in one field (the near-identical neighbours a leak would need).
SCOPES = [
    scope_fields(),
    scope_fields(participantScopeHash=participant("bob")),
    scope_fields(privacyScope="shared"),
    scope_fields(agentId="planner"),
    scope_fields(sandboxEligible=True),
]
STEPS = st.lists(
    st.tuples(st.integers(0, len(SCOPES) - 1), st.sampled_from(["episode", "fact", "delete"]), st.integers(0, 2)),
    min_size=1,
    max_size=30,
)
_tenants = itertools.count()


def _play(service: MemoryService, tenant: str, steps: list[tuple[int, str, int]]) -> Counter[int]:
    """Run the steps as the tenant's admin; return how many changes each scope should show."""
    admin = Caller(tenant, "admin-key", "admin")
    expected: Counter[int] = Counter()
    episodes: dict[int, list[str]] = {i: [] for i in range(len(SCOPES))}
    holding: set[tuple[int, int]] = set()  # (scope, slot) with a current fact
    for n, (i, op, slot) in enumerate(steps):
        scope = SCOPES[i]
        if op == "episode":
            body = episode_body(f"Turn {n} in scope {i}.", "Noted.", session="s", turn=n, scope=scope)
            episodes[i].append(service.writes.write_episode(admin, EpisodeWrite.model_validate(body)).id)
            expected[i] += 1
        elif op == "fact":
            body = fact_body(f"Value {n}", kind=f"slot{slot}", scope=scope, validFrom=f"2026-01-01T00:00:{n:02d}Z")
            service.writes.write_fact(admin, FactWrite.model_validate(body))
            expected[i] += 2 if (i, slot) in holding else 1
            holding.add((i, slot))
        elif episodes[i]:
            service.erasure.delete_episode(admin, episodes[i].pop(), DeleteMemoryQuery.model_validate(scope))
            expected[i] += 1
    return expected


@settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=STEPS)
def test_each_key_reads_exactly_its_own_scopes_changes(
    service: MemoryService, store: Store, steps: list[tuple[int, str, int]]
) -> None:
    tenant = f"iso{next(_tenants)}"
    store.tenant(tenant, create=True)
    expected = _play(service, tenant, steps)
    keys = [auth.scope_key(auth.resolve_scope(Caller(tenant, "k", "agent", grant=s), {})) for s in SCOPES]
    for i, scope in enumerate(SCOPES):
        seen = feed(service, Caller(tenant, f"agent-{i}", "agent", grant=scope), limit=7)
        assert {c.scope_key for c in seen} <= {keys[i]}, f"scope {i} was shown another scope's change"
        assert len(seen) == expected[i], f"scope {i}: {len(seen)} changes, {expected[i]} expected"
        assert all(c.scope is not None and c.scope.model_dump(by_alias=True) == scope for c in seen)
    for agent in ("coder", "planner"):
        host = Caller(tenant, f"host-{agent}", "host", grant={"agentId": agent, "profileId": "default"})
        mine = {keys[i] for i, s in enumerate(SCOPES) if s["agentId"] == agent}
        seen = feed(service, host, limit=5)
        assert {c.scope_key for c in seen} <= mine
        assert len(seen) == sum(expected[i] for i, s in enumerate(SCOPES) if s["agentId"] == agent)
    everything = feed(service, Caller(tenant, "admin-key", "admin"))
    assert len(everything) == sum(expected.values()) == len({c.seq for c in everything})


def test_the_isolation_check_sees_a_leak(service: MemoryService, store: Store) -> None:
    """Positive control of the property's check: a key bound to no participant (a wider grant than
    an agent key's) is shown another participant's changes, and the comparison says so."""
    store.tenant("wide", create=True)
    expected = _play(service, "wide", [(0, "episode", 0), (1, "episode", 0)])
    wide = {k: v for k, v in SCOPES[0].items() if k != "participantScopeHash"}
    seen = feed(service, Caller("wide", "host-wide", "host", grant=wide))
    assert len(seen) == expected[0] + expected[1] == 2
    assert len({c.scope_key for c in seen}) == 2  # what the property's first assertion would flag
    narrow: Any = feed(service, Caller("wide", "agent-0", "agent", grant=SCOPES[0]))
    assert len(narrow) == 1
