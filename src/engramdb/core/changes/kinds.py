"""Which audit actions are changes of the feed, and of which kind; what their targets are called.

The one place that reads the audit log's vocabulary for the feed: an action not listed here (keys,
policy, tombstones, a model's verdicts and jobs, refused writes) changes no scope's memories, and
is not a change.
"""

from __future__ import annotations

from collections.abc import Iterable

ACTION_KINDS: dict[str, str] = {
    "episode.write": "created",
    "fact.write": "created",
    "fact.park": "created",  # written pending review
    "record.create": "created",
    "relationship.create": "created",
    "record.update": "updated",
    "fact.close": "updated",  # its valid time now ends where a later version starts
    "fact.supersede": "superseded",
    "fact.retract": "retracted",
    "fact.archive": "archived",
    "memory.archive": "archived",
    "fact.restore": "restored",
    "memory.restore": "restored",
    "fact.expire": "expired",
    "memory.delete": "deleted",
    "memory.retention": "deleted",
    "record.delete": "deleted",
    "relationship.delete": "deleted",
    "scope.forget": "forgotten",
    "review.approve": "reviewed",
    "review.reject": "reviewed",
    "memory.mark": "marked",
}
TARGETS = {"EPISODE": "episode", "MEMORY_FACT": "fact", "RECORD": "record", "RELATIONSHIP": "relationship"}


def actions_of(kinds: Iterable[str]) -> list[str]:
    """The audit actions of these change kinds (no kinds: every action of the feed), sorted."""
    wanted = set(kinds)
    return sorted(a for a, k in ACTION_KINDS.items() if not wanted or k in wanted)


def target_of(target_kind: str | None) -> str:
    """What a change happened to, by the audit entry's target kind."""
    return TARGETS.get(target_kind or "", "scope")
