"""``EpisodeWrite`` and ``FactWrite``: the REST bodies of AgentMemoryEvent v1 events.

The same fields as ``Episode`` and ``Fact`` (contract/events.py), with the scope and the id
optional because the server derives the scope from the key and computes the id. Every write
path (REST, batch, MCP, CLI, SDK) goes through them, so they also hold the server's bounds and
refuse what the schema admits but means nothing: blank fact text, an episode of blanks, a
validity that ends before it starts.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    model_validator,
)

from engramdb import clock
from engramdb.contract.bounds import check_caps, check_safe_integer, check_unicode, strip_nul
from engramdb.contract.canonical import event_id, fact_id
from engramdb.contract.events import (
    DATE_TIME,
    SCOPE_FIELD_NAMES,
    WRITTEN_TIMES,
    Episode,
    EpisodeBody,
    Fact,
    FactBody,
    Hex64,
    Scope,
    ScopeFields,
    Visibility,
    WireModel,
    check_keepable,
)
from engramdb.errors import InvalidInputError


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
            for name in WRITTEN_TIMES:
                value = data.get(name)
                if isinstance(value, str) and DATE_TIME.fullmatch(value.upper()):  # else: the field says
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
    data = body.model_dump(by_alias=True, exclude_none=True, exclude=SCOPE_FIELD_NAMES)
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


class EpisodeWrite(_Bounded, ScopeFields, EpisodeBody):
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

    def id_under(self, agent_id: str, profile_id: str) -> str:
        """Return the eventId this episode has under an agent and profile: the participant is not
        part of it, so a host can name the episode before the server has hashed its participant."""
        return event_id(
            runtime=self.runtime,
            agent_id=agent_id,
            profile_id=profile_id,
            external_session_id=self.external_session_id,
            turn_index=self.turn_index,
            user_text=self.user_text,
            assistant_text=self.assistant_text,
            source_event_id=self.source_event_id,
        )

    def to_event(self, scope: Scope) -> Episode:
        """Return the complete contract event under ``scope``, with its id computed."""
        computed = self.id_under(scope.agent_id, scope.profile_id)
        return Episode.model_validate(_complete(self, scope, "eventId", computed, self.event_id))


class FactWrite(_Bounded, ScopeFields, FactBody):
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
