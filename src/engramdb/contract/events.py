"""AgentMemoryEvent v1: the wire vocabulary (``Scope``, ``Episode``, ``Fact``).

These models give the same verdict as RushDB's JSON Schema (checked against it by the tests):
unknown fields are rejected, enums and 64-hex patterns enforced, no type coercion. Two
deliberate differences, both where Python's ``jsonschema`` departs from the reference's
JavaScript validator: a trailing newline never satisfies a ``^...$`` pattern or a date-time
(ECMAScript ``$`` does not match before a final newline; Python's ``re`` does).

``EpisodeWrite`` and ``FactWrite``, the REST bodies, are in contract/writes.py.
"""

from __future__ import annotations

import calendar
import functools
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel

from engramdb import clock
from engramdb.contract.bounds import strip_nul
from engramdb.contract.canonical import js_trim
from engramdb.contract.descriptions import FIELD_DESCRIPTIONS

Runtime = Literal["openclaw", "hermes", "custom"]
PrivacyScope = Literal["private", "shared"]
Visibility = Literal["participant", "profile", "shared"]
TrustClass = Literal["trusted", "mixed", "untrusted"]
ConversationKind = Literal["direct", "local", "shared"]

_HEX64 = r"^[a-f0-9]{64}$"  # pydantic's regex engine: `$` is end of text, as in ECMAScript
DATE_TIME = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?"
    r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)",
    re.ASCII,
)


def check_date_time(value: str) -> str:
    """RFC 3339 date-time, as JSON Schema's ``format: date-time`` checks it (case-insensitive)."""
    match = DATE_TIME.fullmatch(value.upper())
    if match is None:
        raise ValueError("must be an RFC 3339 date-time such as 2026-08-18T00:00:00Z")
    year, month, day = int(match.group(1)), int(match.group(2)), int(match.group(3))
    if year == 0 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError("is not a valid calendar date")
    return value


def check_keepable(value: str) -> str:
    """A contract date-time the server can hold: it keeps times in UTC, where
    ``9999-12-31T23:59:59-01:00`` falls past year 9999 (the contract admits it)."""
    try:
        clock.parse(value)
    except (ValueError, OverflowError):
        raise ValueError("is outside the date-times the server keeps (years 1 to 9999 in UTC)") from None
    return value


# A date-time a request asks about (asOf, validAt): well formed, and one the server can compare.
KeptDateTime = Annotated[str, AfterValidator(check_date_time), AfterValidator(check_keepable)]
WRITTEN_TIMES = ("observedAt", "validFrom", "validUntil")


def _integral_number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not a boolean")
    # JSON Schema's "integer" admits 7.0; JavaScript reads it as 7, so the id is the same.
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        return int(value)
    return value


class _Null:
    """Stands for a JSON null in input, which no field of the contract accepts."""

    def __repr__(self) -> str:
        return "null"


_NULL = _Null()

DateTime = Annotated[str, AfterValidator(check_date_time)]
Hex64 = Annotated[str, Field(pattern=_HEX64)]
NonEmpty = Annotated[str, Field(min_length=1)]
SchemaVersion = Annotated[Literal[1], BeforeValidator(_integral_number)]
TurnIndex = Annotated[int, BeforeValidator(_integral_number), Field(ge=0)]
Confidence = Annotated[float, Field(ge=0, le=1)]


def _describe_fields(schema: dict[str, Any], _: type) -> None:
    for name, prop in schema.get("properties", {}).items():
        if name in FIELD_DESCRIPTIONS and isinstance(prop, dict):
            prop.setdefault("description", FIELD_DESCRIPTIONS[name])


__all__ = ["FIELD_DESCRIPTIONS"]  # re-exported: the models describe their fields with it


@functools.cache
def _wire_names(model: type[BaseModel]) -> frozenset[str]:
    """The names a wire model's body may hold (its fields' camelCase aliases)."""
    return frozenset(info.alias or name for name, info in model.model_fields.items())


# A validation context's key: true when the body's JSON text was seen to hold no NUL (no ``\u0000``
# escape, the only way JSON writes one), so no string needs the walk that removes them.
NUL_FREE = "nulFree"


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python; strict types; unknown fields rejected."""

    # Only camelCase is accepted on input: a snake_case spelling is an unknown field, as the
    # schema says, and cannot slip past checks keyed by wire name.
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        extra="forbid",
        strict=True,
        frozen=True,
        json_schema_extra=_describe_fields,
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and not data.keys() <= _wire_names(cls) and cls.model_config.get("extra") == "forbid":
            return data  # a name the model does not have is refused first, before anything is walked
        # The schema has no nullable field: an explicit null fails that field's type check
        # (so the error names the field), instead of counting as "absent".
        if isinstance(data, dict) and None in data.values():
            data = {k: _NULL if v is None else v for k, v in data.items()}
        # NUL characters are dropped from every string, as write bodies always did: no store keeps
        # them (PostgreSQL text cannot hold one).
        walk = cls.strips_nul and not (info.context or {}).get(NUL_FREE)
        return strip_nul(data) if isinstance(data, dict) and walk else data

    # False on the contract's own event shapes, whose verdict must be the JSON Schema's (a NUL is a
    # character there); every body that reaches a store is a request model that strips them.
    strips_nul: ClassVar[bool] = True

    def wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict with camelCase keys and unset optionals dropped."""
        return self.model_dump(by_alias=True, exclude_none=True)


class Scope(WireModel):
    """The five authorization fields. Authorization, never a ranking hint."""

    agent_id: NonEmpty
    profile_id: NonEmpty
    privacy_scope: PrivacyScope
    participant_scope_hash: Hex64
    sandbox_eligible: bool


class EpisodeBody(WireModel):
    schema_version: SchemaVersion = 1
    event_type: Literal["episode"] = "episode"
    runtime: Runtime
    external_session_id: NonEmpty
    source_event_id: str | None = None
    turn_index: TurnIndex
    user_text: str
    assistant_text: str
    summary: NonEmpty
    conversation_kind: ConversationKind
    channel_id_hash: Hex64 | None = None
    trust_class: TrustClass
    origin_class: str
    observed_at: DateTime
    provenance: str


class Episode(Scope, EpisodeBody):
    """A contract ``episode`` event: one completed user/assistant turn and its summary."""

    strips_nul = False

    schema_version: SchemaVersion
    event_type: Literal["episode"]
    event_id: Hex64
    visibility: Visibility

    def scope(self) -> Scope:
        return Scope.model_validate(self.model_dump(include=set(Scope.model_fields), by_alias=True))


class FactBody(WireModel):
    schema_version: SchemaVersion = 1
    event_type: Literal["fact"] = "fact"
    runtime: Runtime
    text: NonEmpty
    kind: NonEmpty
    subject_key: NonEmpty
    confidence: Confidence
    active: bool = True
    source_event_id: NonEmpty
    supersedes_fact_id: str | None = None
    valid_from: DateTime
    valid_until: DateTime | None = None
    trust_class: TrustClass
    provenance: str


class Fact(Scope, FactBody):
    """A contract ``fact`` event: a claim about ``subjectKey`` of a ``kind``."""

    strips_nul = False

    schema_version: SchemaVersion
    event_type: Literal["fact"]
    fact_id: Hex64
    active: bool
    visibility: Visibility

    def scope(self) -> Scope:
        return Scope.model_validate(self.model_dump(include=set(Scope.model_fields), by_alias=True))


def _not_blank_id(value: str) -> str:
    if not js_trim(value):
        raise ValueError("must not be blank")
    return value


# A participant's raw id (``userId``): the server turns it into participantScopeHash with the
# tenant's secret salt and keeps nothing of it. Accepted in bodies only, never in a URL.
UserId = Annotated[str, Field(min_length=1, max_length=512), AfterValidator(_not_blank_id)]
SCOPE_FIELD_NAMES = {*Scope.model_fields, "user_id"}


class ScopeFields(WireModel):
    """Scope fields a request may name; the key's grant supplies the rest."""

    agent_id: NonEmpty | None = None
    profile_id: NonEmpty | None = None
    privacy_scope: PrivacyScope | None = None
    participant_scope_hash: Hex64 | None = None
    sandbox_eligible: bool | None = None
    user_id: UserId | None = None

    def named_scope_fields(self) -> dict[str, Any]:
        """Return the scope fields the body names (those it leaves out are absent); a ``userId``
        stands for participantScopeHash until the server derives it."""
        return self.model_dump(include=SCOPE_FIELD_NAMES, exclude_none=True, by_alias=True)
