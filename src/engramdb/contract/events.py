"""AgentMemoryEvent v1: the wire vocabulary (``Scope``, ``Episode``, ``Fact``).

These models give the same verdict as RushDB's JSON Schema (checked against it by the tests):
unknown fields are rejected, enums and 64-hex patterns enforced, no type coercion. Two
deliberate differences, both where Python's ``jsonschema`` departs from the reference's
JavaScript validator: a trailing newline never satisfies a ``^...$`` pattern or a date-time
(ECMAScript ``$`` does not match before a final newline; Python's ``re`` does).

``EpisodeWrite`` and ``FactWrite`` are the REST bodies: the same fields, with the scope and the
id optional because the server derives the scope from the key and computes the id. Every write
path (REST, batch, MCP, CLI, SDK) goes through them, so they also hold the server's bounds and
refuse what the schema admits but means nothing: blank fact text, an episode of blanks, a
validity that ends before it starts.
"""

from __future__ import annotations

import calendar
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)
from pydantic.alias_generators import to_camel

from engramdb import clock
from engramdb.contract.bounds import check_caps, check_safe_integer, check_unicode, strip_nul
from engramdb.contract.canonical import event_id, fact_id, js_trim
from engramdb.contract.descriptions import FIELD_DESCRIPTIONS
from engramdb.errors import InvalidInputError

Runtime = Literal["openclaw", "hermes", "custom"]
PrivacyScope = Literal["private", "shared"]
Visibility = Literal["participant", "profile", "shared"]
TrustClass = Literal["trusted", "mixed", "untrusted"]
ConversationKind = Literal["direct", "local", "shared"]

_HEX64 = r"^[a-f0-9]{64}$"  # pydantic's regex engine: `$` is end of text, as in ECMAScript
_DATE_TIME = re.compile(
    r"(\d{4})-(0[1-9]|1[0-2])-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?"
    r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)",
    re.ASCII,
)


def check_date_time(value: str) -> str:
    """RFC 3339 date-time, as JSON Schema's ``format: date-time`` checks it (case-insensitive)."""
    match = _DATE_TIME.fullmatch(value.upper())
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
_WRITTEN_TIMES = ("observedAt", "validFrom", "validUntil")


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
    def _no_nulls(cls, data: Any) -> Any:
        # The schema has no nullable field: an explicit null fails that field's type check
        # (so the error names the field), instead of counting as "absent".
        if isinstance(data, dict) and None in data.values():
            data = {k: _NULL if v is None else v for k, v in data.items()}
        # NUL characters are dropped from every string, as write bodies always did: no store keeps
        # them (PostgreSQL text cannot hold one).
        return strip_nul(data) if isinstance(data, dict) and cls.strips_nul else data

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


class _EpisodeBody(WireModel):
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


class Episode(Scope, _EpisodeBody):
    """A contract ``episode`` event: one completed user/assistant turn and its summary."""

    strips_nul = False

    schema_version: SchemaVersion
    event_type: Literal["episode"]
    event_id: Hex64
    visibility: Visibility

    def scope(self) -> Scope:
        return Scope.model_validate(self.model_dump(include=set(Scope.model_fields), by_alias=True))


class _FactBody(WireModel):
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


class Fact(Scope, _FactBody):
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
_NAMED = {*Scope.model_fields, "user_id"}


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
        return self.model_dump(include=_NAMED, exclude_none=True, by_alias=True)


class _Bounded(WireModel):
    """Server-side bounds for write bodies: NULs stripped, over-long text refused (422)."""

    @model_validator(mode="before")
    @classmethod
    def _bound(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = strip_nul(data)
            check_unicode(data)
            check_caps(data)
            check_safe_integer(data, "turnIndex")
            for name in _WRITTEN_TIMES:
                value = data.get(name)
                if isinstance(value, str) and _DATE_TIME.fullmatch(value.upper()):  # else: the field says
                    try:
                        check_keepable(value)
                    except ValueError as error:
                        raise InvalidInputError(f"{name} {error}", field=name) from None
        return data


def _complete(body: WireModel, scope: Scope, id_field: str, computed: str, given: str | None) -> dict[str, Any]:
    """Return a write body as a complete event: its scope, and its id checked and set."""
    if given is not None and given != computed:
        raise InvalidInputError(
            f"{id_field} does not match the content (expected {computed})",
            field=id_field,
            expected=computed,
        )
    data = body.model_dump(by_alias=True, exclude_none=True, exclude=_NAMED)
    data.setdefault("visibility", "participant" if scope.privacy_scope == "private" else "shared")
    return {**data, **scope.model_dump(by_alias=True), id_field: computed}


def default_summary(user_text: str, assistant_text: str) -> str:
    """The summary of an episode written without one: the user's words on one line (else the
    assistant's), cut at 240 characters, as the SDK's capture makes it."""
    text = " ".join((user_text if user_text.strip() else assistant_text).split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


SUMMARY_CHARS = 240
DEFAULT_SESSION = "default"
# What a write leaves out: a minimal episode is {userText, assistantText}, a minimal fact
# {text, subjectKey, kind}, plus the scope the key does not fix.
EPISODE_DEFAULTS: dict[str, Any] = {
    "runtime": "custom",
    "externalSessionId": DEFAULT_SESSION,
    "turnIndex": 0,
    "userText": "",
    "assistantText": "",
    "conversationKind": "direct",
    "trustClass": "mixed",
    "originClass": "conversation",
    "provenance": "api",
}
FACT_DEFAULTS: dict[str, Any] = {
    "runtime": "custom",
    "confidence": 1.0,
    "sourceEventId": "api",
    "trustClass": "trusted",
    "provenance": "api",
}


class EpisodeWrite(_Bounded, ScopeFields, _EpisodeBody):
    """REST body for ``POST /v1/episodes``: an episode whose scope and id may be omitted.

    Everything but the turn has a default (``EPISODE_DEFAULTS``; ``observedAt`` now, the summary
    the user's words, ``visibility`` from the scope): ``{userText, assistantText}`` is enough.
    """

    event_id: Hex64 | None = None
    visibility: Visibility | None = None  # from the scope when omitted

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        filled = {**EPISODE_DEFAULTS, "observedAt": clock.now_text(), **data}
        user, assistant = filled.get("userText"), filled.get("assistantText")
        if "summary" not in data and isinstance(user, str) and isinstance(assistant, str):
            summary = default_summary(user, assistant)
            if summary:  # else the summary is missing, and the error says so
                filled["summary"] = summary
        return filled

    @model_validator(mode="after")
    def _says_something(self) -> EpisodeWrite:
        # The contract lets the two turn texts be empty and the summary be blanks; all three
        # blank at once is a turn with nothing in it, which no recall could ever find.
        if not any(t.strip() for t in (self.summary, self.user_text, self.assistant_text)):
            raise InvalidInputError(
                "summary, userText and assistantText are all blank: the episode says nothing",
                field="summary",
            )
        return self

    def to_event(self, scope: Scope) -> Episode:
        """Return the complete contract event under ``scope``, with its id computed."""
        computed = event_id(
            runtime=self.runtime,
            agent_id=scope.agent_id,
            profile_id=scope.profile_id,
            external_session_id=self.external_session_id,
            turn_index=self.turn_index,
            user_text=self.user_text,
            assistant_text=self.assistant_text,
            source_event_id=self.source_event_id,
        )
        return Episode.model_validate(_complete(self, scope, "eventId", computed, self.event_id))


class FactWrite(_Bounded, ScopeFields, _FactBody):
    """REST body for ``POST /v1/facts``: a fact whose scope and id may be omitted.

    ``{text, subjectKey, kind}`` is enough: the rest has defaults (``FACT_DEFAULTS``;
    ``validFrom`` now, ``visibility`` from the scope).
    """

    fact_id: Hex64 | None = None
    visibility: Visibility | None = None  # from the scope when omitted

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return {**FACT_DEFAULTS, "validFrom": clock.now_text(), **data}

    @model_validator(mode="after")
    def _is_a_claim(self) -> FactWrite:
        # The schema takes any non-empty text and any two date-times; a fact of blanks claims
        # nothing, and one whose validity ends when (or before) it starts was never true.
        for name, value in (("text", self.text), ("subjectKey", self.subject_key), ("kind", self.kind)):
            if not value.strip():  # a blank subject or kind would make a slot no one can name
                raise InvalidInputError(f"{name} must not be blank", field=name)
        if self.valid_until is not None and clock.parse(self.valid_until) <= clock.parse(self.valid_from):
            raise InvalidInputError(
                f"validUntil ({self.valid_until}) must be after validFrom ({self.valid_from})",
                field="validUntil",
            )
        return self

    def to_event(self, scope: Scope) -> Fact:
        """Return the complete contract event under ``scope``, with its id computed."""
        computed = fact_id(
            runtime=self.runtime,
            agent_id=scope.agent_id,
            profile_id=scope.profile_id,
            participant_scope_hash=scope.participant_scope_hash,
            subject_key=self.subject_key,
            kind=self.kind,
            source_event_id=self.source_event_id,
            text=self.text,
        )
        return Fact.model_validate(_complete(self, scope, "factId", computed, self.fact_id))
