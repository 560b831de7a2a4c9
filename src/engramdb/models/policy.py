"""A tenant's policy document: trust, multi-valued kinds, what a tombstoned value does.

The trust table decides, for each ``trustClass`` (from the host) and origin (``stated`` by the
host, ``derived`` by a model), whether a new fact is current at once or waits for a reviewer,
and how much its trust weighs in recall's ranking.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from engramdb.contract.bounds import TEXT_CAPS
from engramdb.models.base import ResponseModel

DEFAULT_MULTI_VALUED = ["likes", "dislikes", "note", "interest", "skill", "goal", "event", "reflection"]
TRUST_CLASSES = ("trusted", "mixed", "untrusted")
ORIGINS = ("stated", "derived")


class TrustRule(ResponseModel):
    """What happens to a new fact of one trust class and origin."""

    status: Literal["active", "pending_review"] = Field(
        description="active (current at once) or pending_review (waits for a reviewer)"
    )
    weight: float = Field(ge=0, le=1, description="multiplies the trust feature in recall")


def _rule(status: str, weight: float) -> dict[str, Any]:
    return {"status": status, "weight": weight}


DEFAULT_TRUST: dict[str, dict[str, dict[str, Any]]] = {
    "trusted": {"stated": _rule("active", 1.0), "derived": _rule("pending_review", 0.7)},
    "mixed": {"stated": _rule("active", 0.7), "derived": _rule("pending_review", 0.5)},
    "untrusted": {"stated": _rule("pending_review", 0.4), "derived": _rule("pending_review", 0.3)},
}


# Ages past a century are refused (found by the fuzz test: 10**20 days overflowed the aging job's date).
MAX_DAYS = 36_525
MAX_MULTI_VALUED_KINDS = 1_000  # a bound on the list; each kind is bounded as a fact write's is


class AgingPolicy(ResponseModel):
    """When a memory is archived: weak (rarely or long ago recalled) and old, unless protected."""

    model_config = ConfigDict(extra="forbid")

    archive_below_strength: float = Field(0.25, ge=0, le=1, description="archive when strength falls below this")
    archive_after_days: float = Field(
        90, ge=1, le=MAX_DAYS, description="and the memory was recorded more than this many days ago"
    )
    half_life_days: float = Field(30, gt=0, le=MAX_DAYS, description="strength halves every N days without a recall")
    protect_importance: float = Field(
        0.8, ge=0, le=1, description="memories at least this important are never archived"
    )


class RetentionPolicy(ResponseModel):
    """How long memories are kept at most (enforced by the aging job, audited as system)."""

    model_config = ConfigDict(extra="forbid")

    episode_days: float | None = Field(
        None, ge=1, le=MAX_DAYS, description="erase episodes observed longer ago (none: keep; at least 1)"
    )
    fact_days: float | None = Field(
        None,
        ge=1,
        le=MAX_DAYS,
        description="erase facts recorded longer ago, every status, never pinned ones (none: keep; >= 1)",
    )


class TenantPolicy(ResponseModel):
    """Per-tenant policy (``GET``/``PUT /v1/policy``); defaults apply until an admin sets one."""

    model_config = ConfigDict(extra="forbid")  # a misspelt setting must not be dropped silently

    multi_valued_kinds: list[str] = Field(
        default_factory=lambda: list(DEFAULT_MULTI_VALUED),
        max_length=MAX_MULTI_VALUED_KINDS,
        description="kinds whose facts coexist; every other kind holds one current value per subject",
    )
    tombstone_policy: Literal["refuse", "review"] = Field(
        "refuse",
        description="re-asserting a tombstoned value: 'refuse' (409) or 'review' (parked pending_review)",
    )

    model_supersede_threshold: float = Field(
        0.75,
        ge=0,
        le=1,
        description="a model's supersedes (and duplicate) verdict acts only at or above this confidence; below "
        "it, both facts stand",
    )
    model_neighbours: int = Field(
        5,
        ge=0,
        le=20,
        description="current facts of the scope (nearest by both recall arms) a model judges each "
        "extracted fact against (0: no judgement)",
    )

    trust: dict[str, dict[str, TrustRule]] = Field(
        default_factory=lambda: {
            t: {o: TrustRule(**rule) for o, rule in origins.items()} for t, origins in DEFAULT_TRUST.items()
        },
        description="trustClass -> origin (stated|derived) -> {status, weight}; missing cells take the defaults",
    )

    @field_validator("multi_valued_kinds")
    @classmethod
    def _bounded_kinds(cls, kinds: list[str]) -> list[str]:
        cap = TEXT_CAPS["kind"]
        for kind in kinds:
            if not 1 <= len(kind) <= cap:
                raise ValueError(f"each kind has 1 to {cap} characters, as a fact's kind does ({len(kind)} given)")
        return kinds

    aging: AgingPolicy = Field(default_factory=AgingPolicy, description="decay and archival (docs/aging.md)")
    retention: RetentionPolicy = Field(default_factory=RetentionPolicy, description="maximum ages (docs/aging.md)")

    @field_validator("trust", mode="before")
    @classmethod
    def _complete(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        unknown = set(value) - set(TRUST_CLASSES)
        if unknown:
            raise ValueError(f"unknown trust class {sorted(unknown)[0]!r}")
        table: dict[str, dict[str, Any]] = {}
        for trust_class in TRUST_CLASSES:
            given = value.get(trust_class) or {}
            if set(given) - set(ORIGINS):
                raise ValueError(f"unknown origin {sorted(set(given) - set(ORIGINS))[0]!r}")
            table[trust_class] = {o: given.get(o, DEFAULT_TRUST[trust_class][o]) for o in ORIGINS}
        return table

    def is_multi_valued(self, kind: str) -> bool:
        return kind in self.multi_valued_kinds

    def rule(self, trust_class: str, origin: str) -> TrustRule:
        """Return the rule of one cell of the trust table."""
        return self.trust[trust_class][origin]
