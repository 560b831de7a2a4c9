"""Webhooks: endpoints an admin registers to receive the change feed, signed, from a durable cursor."""

from __future__ import annotations

import httpx
from pydantic import Field, field_validator

from engramdb.contract.events import WireModel
from engramdb.models.base import QueryModel, ResponseModel
from engramdb.models.changes import ChangeKind

SIGNATURE_HEADER = "EngramDB-Signature"  # t=<unix time>,v1=<hex HMAC-SHA256(secret, f"{t}.{body}")>


class WebhookCreate(WireModel):
    """Body of ``POST /v1/webhooks``: where to send the feed, and which kinds of change."""

    url: str = Field(min_length=8, max_length=2000, description="the endpoint: an http:// or https:// URL")
    kinds: list[ChangeKind] = Field(
        default_factory=list, max_length=20, description="the kinds of change it receives (empty: every kind)"
    )
    label: str | None = Field(None, max_length=200, description="a note for people")
    after: int | None = Field(
        None,
        ge=0,
        le=2**53 - 1,
        description="the first delivery starts after this sequence number of the feed (default: its head "
        "now, so only changes from here on; 0: the whole history)",
    )

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
            raise ValueError("must be an http:// or https:// URL")
        try:  # as the delivery will read it: a URL it cannot send to fails here, not on every try
            parsed = httpx.URL(value)
            parsed.host.encode("idna")
            port = parsed.port
        except (httpx.InvalidURL, UnicodeError, ValueError) as error:
            raise ValueError(f"is not a URL a delivery can be sent to ({error})") from None
        if not parsed.host or (port is not None and not 0 < port < 65536):
            raise ValueError("must name a host (and a port from 1 to 65535)")
        if parsed.userinfo:
            raise ValueError("must not hold a user name or password (it would be listed with the endpoint)")
        return value


class WebhookView(ResponseModel):
    """An endpoint as listed: never its secret."""

    webhook_id: str = Field(description="the endpoint's id")
    url: str = Field(description="where deliveries go")
    kinds: list[str] = Field(description="the kinds of change it receives (empty: every kind)")
    label: str | None = Field(None, description="a note for people")
    created_at: str = Field(description="when it was registered")
    cursor: int = Field(description="the last sequence number of the feed taken into a delivery")
    delivered: int = Field(description="deliveries it acknowledged")
    pending: bool = Field(description="a delivery is waiting to be acknowledged")
    dead_letters: int = Field(description="deliveries that failed their last try (replay them)")
    last_delivered_at: str | None = Field(None, description="when it last acknowledged a delivery")
    last_error: str | None = Field(None, description="why the last try failed, if it did")
    secret_fingerprint: str = Field(description="the first 12 hex characters of SHA-256 of its secret")


class WebhookCreated(WebhookView):
    """A new endpoint, with its signing secret."""

    secret: str = Field(description="the signing secret; shown once, never again")


class WebhookList(ResponseModel):
    """The tenant's endpoints."""

    webhooks: list[WebhookView] = Field(description="the endpoints, oldest first")


class DeadLetterQuery(QueryModel):
    """How many dead deliveries to list."""

    limit: int = Field(100, ge=1, le=1000, description="at most this many (1-1000)")


class DeadLetter(ResponseModel):
    """A delivery that failed its last try: what it carries and why it failed."""

    delivery_id: str = Field(description="the delivery's id (its body's deliveryId)")
    after: int = Field(description="it carries the changes after this sequence number")
    through: int = Field(description="through this one")
    changes: int = Field(description="how many changes it carries")
    attempts: int = Field(description="tries made")
    last_error: str | None = Field(None, description="why the last try failed")
    last_status: int | None = Field(None, description="the endpoint's last HTTP status, if it answered")
    created_at: str = Field(description="when it was first due")
    dead_at: str | None = Field(None, description="when it was given up")


class DeadLetterList(ResponseModel):
    """An endpoint's dead deliveries, oldest first."""

    dead_letters: list[DeadLetter] = Field(description="the dead deliveries")


class ReplayRequest(WireModel):
    """Body of ``POST /v1/webhooks/{webhook_id}/replay``: one dead delivery, or all of them."""

    delivery_id: str | None = Field(None, max_length=200, description="the dead delivery to send again (default: all)")


class ReplayResult(ResponseModel):
    """The dead deliveries that are due again."""

    replayed: list[str] = Field(description="their ids; each is sent again, as before, with a fresh signature")
