"""Decay and archival: how strong a memory still is, and whether the policy archives it. Pure.

Strength falls by half every ``halfLifeDays`` since the memory was last recalled (or recorded, if
never), and grows with how often it was recalled: ``min(1, 0.5 ** (idle / halfLife) * (1 +
ln(1 + uses)))``. A memory is archived when it is weaker than ``archiveBelowStrength`` and was
recorded more than ``archiveAfterDays`` ago, unless a person pinned it or its importance is at
least ``protectImportance``. Without a person's importance, a fact weighs 0.5 and an episode 0.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from engramdb import clock
from engramdb.models.policy import AgingPolicy
from engramdb.storage.port import AgingRow

PRIOR_IMPORTANCE = {"EPISODE": 0.3, "MEMORY_FACT": 0.5}
DAY = 86_400.0


@dataclass(frozen=True)
class Decision:
    """Whether to archive a memory, and why (the reason goes to the audit log)."""

    archive: bool
    reason: str
    strength: float


def importance(row: AgingRow) -> float:
    return row.importance if row.importance is not None else PRIOR_IMPORTANCE[row.source]


def strength(row: AgingRow, now: datetime, half_life_days: float) -> float:
    """The memory's strength now, from recency of use and count of use (0-1)."""
    last = clock.parse(row.last_used_at or row.recorded_at)
    idle_days = max(0.0, (now - last).total_seconds() / DAY)
    return float(min(1.0, 0.5 ** (idle_days / half_life_days) * (1 + math.log1p(row.use_count))))


def decide(row: AgingRow, policy: AgingPolicy, now: datetime) -> Decision:
    """Archive or keep, by the policy; the first rule that keeps a memory names why."""
    power = strength(row, now, policy.half_life_days)
    age_days = (now - clock.parse(row.recorded_at)).total_seconds() / DAY
    if row.pinned:
        return Decision(False, "pinned by a person", power)
    if importance(row) >= policy.protect_importance:
        return Decision(False, f"importance {importance(row):.2f} is protected", power)
    if age_days <= policy.archive_after_days:
        return Decision(False, f"recorded {age_days:.0f} days ago, not over {policy.archive_after_days:g}", power)
    if power >= policy.archive_below_strength:
        return Decision(False, f"strength {power:.3f} is not below {policy.archive_below_strength:g}", power)
    return Decision(
        True, f"strength {power:.3f} below {policy.archive_below_strength:g}, recorded {age_days:.0f} days ago", power
    )
