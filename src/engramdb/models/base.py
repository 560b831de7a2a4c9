"""The three kinds of model every operation is made of: bodies, query strings and answers.

Bodies are ``WireModel``s (``engramdb.contract.events``): camelCase only, strict types, unknown
fields refused. Query strings are ``QueryModel``s: camelCase only and unknown names refused too,
but values arrive as text and are read as their type ("true", "5"). Answers are
``ResponseModel``s: camelCase out, lenient in, since the server builds them and the SDK parses
them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from engramdb.contract.bounds import LONE_SURROGATE, has_lone_surrogate
from engramdb.contract.events import FIELD_DESCRIPTIONS, KeptDateTime
from engramdb.errors import InvalidInputError

MAX_LIMIT = 50
DEFAULT_LIMIT = 8
__all__ = ["KeptDateTime"]  # re-exported for the query models
SCOPE_NAMES = ("agentId", "profileId", "privacyScope", "participantScopeHash", "sandboxEligible")


class ResponseModel(BaseModel):
    """camelCase out, lenient in (responses are built by the server or parsed by the SDK)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """Return the JSON-ready dict with camelCase keys and unset optionals dropped."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class QueryModel(BaseModel):
    """A query string: camelCase names (snake_case read too), values read from text. Unknown
    names are ignored, as they always were (cache-busting and tracing parameters pass)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        extra="ignore",
        frozen=True,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        # Refused naming the parameter on every surface (the SDK, CLI and MCP too), not failing in the
        # store: a NUL names nothing stored and PostgreSQL's text cannot carry one; UTF-8 cannot
        # carry a lone surrogate.
        if has_lone_surrogate(value):
            raise ValueError(LONE_SURROGATE)
        if any(isinstance(v, str) and "\x00" in v for v in (value if isinstance(value, list) else [value])):
            raise ValueError("holds a NUL character")
        return value

    def wire(self) -> dict[str, Any]:
        """Return the parameters that are set, camelCase, as JSON values."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def _scope_field(name: str, **constraints: Any) -> Any:
    return Field(None, description=f"{FIELD_DESCRIPTIONS[name]}; only where the key does not fix it", **constraints)


class ScopeQuery(QueryModel):
    """The scope fields a request names in its query string; the key's grant supplies the rest."""

    agent_id: str | None = _scope_field("agentId", min_length=1, max_length=128)
    profile_id: str | None = _scope_field("profileId", min_length=1, max_length=128)
    privacy_scope: Literal["private", "shared"] | None = _scope_field("privacyScope")
    participant_scope_hash: str | None = _scope_field("participantScopeHash", pattern=r"^[a-f0-9]{64}$")
    sandbox_eligible: bool | None = _scope_field("sandboxEligible")

    @model_validator(mode="before")
    @classmethod
    def _no_raw_participant(cls, data: Any) -> Any:
        # Said, not ignored: a host that sent userId here would otherwise read another scope's answer.
        if isinstance(data, dict) and ({"userId", "user_id"} & set(data)):
            raise InvalidInputError(
                "userId is accepted in request bodies only (URLs are logged): name participantScopeHash, "
                "which POST /v1/scope/resolve gives",
                field="userId",
            )
        return data

    def named_scope_fields(self) -> dict[str, Any]:
        """Return the scope fields the query names (those it leaves out are absent)."""
        return {k: v for k, v in self.wire().items() if k in SCOPE_NAMES}


class ScopeView(ResponseModel):
    """The five scope fields of a stored memory."""

    agent_id: str = Field(description=FIELD_DESCRIPTIONS["agentId"])
    profile_id: str = Field(description=FIELD_DESCRIPTIONS["profileId"])
    privacy_scope: str = Field(description=FIELD_DESCRIPTIONS["privacyScope"])
    participant_scope_hash: str = Field(description=FIELD_DESCRIPTIONS["participantScopeHash"])
    sandbox_eligible: bool = Field(description=FIELD_DESCRIPTIONS["sandboxEligible"])

    def __getitem__(self, wire_name: str) -> Any:
        # Read like the mapping it was before it had a model: scope["agentId"].
        return self.wire()[wire_name]
