"""Every REST endpoint once, as a function that returns a ``Call``: the request and its reader.

Both clients are built from these functions (``client.py``), so a new endpoint is one function
here and one line in each client; nothing is written twice. Bodies are the server's own models
(``engramdb.models.api``, ``engramdb.contract.events``); a mapping is accepted too and validated
with the same model (camelCase or snake_case keys).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, ParamSpec, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from engramdb.contract.events import EpisodeWrite, FactWrite, ScopeFields
from engramdb.core.policy import TenantPolicy
from engramdb.errors import InvalidInputError
from engramdb.models.api import (
    AuditPage,
    CorrectRequest,
    EditAndApprove,
    EpisodeBatchResult,
    FactHistory,
    FactList,
    Health,
    KeyCreated,
    KeyCreateRequest,
    KeyList,
    LiftRequest,
    MemoryView,
    RecallRequest,
    RecallResponse,
    RejectDecision,
    RetractRequest,
    ReviewDecision,
    ReviewQueue,
    TombstoneList,
    TombstoneView,
    WriteResponse,
)
from engramdb.sdk.errors import error_from_response

T = TypeVar("T")
P = ParamSpec("P")
M = TypeVar("M", bound=BaseModel)
Body = Mapping[str, object]
Params = dict[str, str | int | float]

# name -> (HTTP method, path template as the server declares it); checked against the app.
ROUTES: dict[str, tuple[str, str]] = {}


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer; the transports only send it."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: Params | None = None
    json: dict[str, Any] | None = None

    def finish(self, response: httpx.Response) -> T:
        """Return the parsed answer, or raise the typed error the response carries."""
        if not response.is_success:
            raise error_from_response(response)
        return self.read(response)


def _route(method: str, template: str) -> Callable[[Callable[P, Call[T]]], Callable[P, Call[T]]]:
    def mark(build: Callable[P, Call[T]]) -> Callable[P, Call[T]]:
        ROUTES[build.__name__] = (method, template)
        return build

    return mark


def _reader(model: type[M]) -> Callable[[httpx.Response], M]:
    return lambda response: model.model_validate(response.json())


def _none(_: httpx.Response) -> None:
    return None


def as_model(model: type[M], body: M | Body) -> M:
    """Return ``body`` as ``model``; a mapping is validated (snake_case keys become camelCase)."""
    if isinstance(body, model):
        return body
    if not isinstance(body, Mapping):
        raise InvalidInputError(f"expected {model.__name__} or a mapping, got {type(body).__name__}")
    data = {to_camel(k) if "_" in k else k: v for k, v in body.items()}
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "body"
        raise InvalidInputError(f"{field}: {first['msg']}", field=field) from error


def _wire(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _id(value: str) -> str:
    return quote(value, safe="")


def _params(scope: ScopeFields | Body | None = None, **named: object) -> Params:
    """Query parameters: scope fields plus the named ones, booleans as the server reads them."""
    values: dict[str, object] = {}
    if scope is not None:
        values.update(as_model(ScopeFields, scope).named_scope_fields())
    values.update({to_camel(k): v for k, v in named.items()})
    out: Params = {}
    for key, value in values.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            out[key] = value
    return out


# -- service --------------------------------------------------------------------------------


@_route("GET", "/healthz")
def health() -> Call[Health]:
    """Return liveness, version, embedder and storage of the server."""
    return Call("GET", "/healthz", _reader(Health))


# -- memories -------------------------------------------------------------------------------


@_route("POST", "/v1/episodes")
def write_episode(body: EpisodeWrite | Body) -> Call[WriteResponse]:
    """Store an episode; ``created`` is false when the same id was already stored (200)."""
    return Call("POST", "/v1/episodes", _reader(WriteResponse), json=_wire(as_model(EpisodeWrite, body)))


@_route("POST", "/v1/episodes/batch")
def write_episode_batch(bodies: list[EpisodeWrite | Body]) -> Call[EpisodeBatchResult]:
    """Store up to 100 episodes in one transaction; each result has its own ``status``."""
    episodes = [_wire(as_model(EpisodeWrite, body)) for body in bodies]
    return Call("POST", "/v1/episodes/batch", _reader(EpisodeBatchResult), json={"episodes": episodes})


@_route("POST", "/v1/facts")
def write_fact(
    body: FactWrite | Body, *, origin: Literal["stated", "derived"] = "stated"
) -> Call[WriteResponse]:
    """Store a fact; ``origin="derived"`` when a model wrote it (the trust policy applies)."""
    return Call("POST", "/v1/facts", _reader(WriteResponse), params={"origin": origin},
                json=_wire(as_model(FactWrite, body)))  # fmt: skip


@_route("GET", "/v1/episodes/{event_id}")
def get_episode(event_id: str, *, scope: ScopeFields | Body | None = None) -> Call[MemoryView]:
    """Return one episode of the caller's scope."""
    return Call("GET", f"/v1/episodes/{_id(event_id)}", _reader(MemoryView), params=_params(scope))


@_route("GET", "/v1/facts/{fact_id}")
def get_fact(fact_id: str, *, scope: ScopeFields | Body | None = None) -> Call[MemoryView]:
    """Return one fact of the caller's scope, with its lifecycle."""
    return Call("GET", f"/v1/facts/{_id(fact_id)}", _reader(MemoryView), params=_params(scope))


@_route("GET", "/v1/facts")
def list_facts(
    *,
    scope: ScopeFields | Body | None = None,
    subject_key: str | None = None,
    kind: str | None = None,
    limit: int = 100,
    as_of: str | None = None,
    valid_at: str | None = None,
    include_history: bool = False,
) -> Call[FactList]:
    """Return the scope's current facts (or as of / valid at a time, or with history)."""
    params = _params(scope, subject_key=subject_key, kind=kind, limit=limit, as_of=as_of,
                     valid_at=valid_at, include_history=include_history)  # fmt: skip
    return Call("GET", "/v1/facts", _reader(FactList), params=params)


# -- lifecycle ------------------------------------------------------------------------------


@_route("POST", "/v1/facts/{fact_id}/correct")
def correct_fact(fact_id: str, body: CorrectRequest | Body) -> Call[WriteResponse]:
    """Replace an active fact with a corrected one; the old value is tombstoned."""
    return Call("POST", f"/v1/facts/{_id(fact_id)}/correct", _reader(WriteResponse),
                json=_wire(as_model(CorrectRequest, body)))  # fmt: skip


@_route("POST", "/v1/facts/{fact_id}/retract")
def retract_fact(fact_id: str, body: RetractRequest | Body) -> Call[MemoryView]:
    """Retract an active fact; its value is tombstoned."""
    return Call("POST", f"/v1/facts/{_id(fact_id)}/retract", _reader(MemoryView),
                json=_wire(as_model(RetractRequest, body)))  # fmt: skip


@_route("GET", "/v1/facts/{fact_id}/history")
def fact_history(fact_id: str, *, scope: ScopeFields | Body | None = None) -> Call[FactHistory]:
    """Return every version of a fact, oldest first, with the slot's tombstones."""
    return Call("GET", f"/v1/facts/{_id(fact_id)}/history", _reader(FactHistory),
                params=_params(scope))  # fmt: skip


@_route("GET", "/v1/tombstones")
def list_tombstones(
    *,
    scope: ScopeFields | Body | None = None,
    subject_key: str | None = None,
    kind: str | None = None,
    include_lifted: bool = False,
) -> Call[TombstoneList]:
    """Return the values refused in the caller's scope."""
    params = _params(scope, subject_key=subject_key, kind=kind, include_lifted=include_lifted)
    return Call("GET", "/v1/tombstones", _reader(TombstoneList), params=params)


@_route("POST", "/v1/tombstones/{tombstone_id}/lift")
def lift_tombstone(tombstone_id: str, body: LiftRequest | Body) -> Call[TombstoneView]:
    """Lift a tombstone so its value may become current again (reviewer or admin)."""
    return Call("POST", f"/v1/tombstones/{_id(tombstone_id)}/lift", _reader(TombstoneView),
                json=_wire(as_model(LiftRequest, body)))  # fmt: skip


# -- review ---------------------------------------------------------------------------------


@_route("GET", "/v1/review")
def review_queue(
    *,
    kind: str | None = None,
    subject_key: str | None = None,
    older_than_seconds: float | None = None,
    limit: int = 100,
) -> Call[ReviewQueue]:
    """Return the tenant's facts awaiting review, oldest first (reviewer or admin)."""
    params = _params(kind=kind, subject_key=subject_key, older_than_seconds=older_than_seconds,
                     limit=limit)  # fmt: skip
    return Call("GET", "/v1/review", _reader(ReviewQueue), params=params)


@_route("POST", "/v1/review/{fact_id}/approve")
def approve(fact_id: str, body: ReviewDecision | Body | None = None) -> Call[WriteResponse]:
    """Make a pending fact current."""
    decision = as_model(ReviewDecision, body if body is not None else {})
    return Call("POST", f"/v1/review/{_id(fact_id)}/approve", _reader(WriteResponse),
                json=_wire(decision))  # fmt: skip


@_route("POST", "/v1/review/{fact_id}/reject")
def reject(fact_id: str, body: RejectDecision | Body) -> Call[MemoryView]:
    """Reject a pending fact, saying why (``reason``); its value is tombstoned."""
    return Call("POST", f"/v1/review/{_id(fact_id)}/reject", _reader(MemoryView),
                json=_wire(as_model(RejectDecision, body)))  # fmt: skip


@_route("POST", "/v1/review/{fact_id}/edit-and-approve")
def edit_and_approve(fact_id: str, body: EditAndApprove | Body) -> Call[WriteResponse]:
    """Replace a pending fact's text with the reviewer's, and approve it."""
    return Call("POST", f"/v1/review/{_id(fact_id)}/edit-and-approve", _reader(WriteResponse),
                json=_wire(as_model(EditAndApprove, body)))  # fmt: skip


# -- audit, policy, recall, keys ------------------------------------------------------------


@_route("GET", "/v1/audit")
def audit(*, after: int = 0, limit: int = 100) -> Call[AuditPage]:
    """Return a page of the tenant's hash-chained audit log (reviewer or admin)."""
    return Call("GET", "/v1/audit", _reader(AuditPage), params=_params(after=after, limit=limit))


@_route("GET", "/v1/policy")
def get_policy() -> Call[TenantPolicy]:
    """Return the tenant's policy."""
    return Call("GET", "/v1/policy", _reader(TenantPolicy))


@_route("PUT", "/v1/policy")
def put_policy(policy: TenantPolicy | Body) -> Call[TenantPolicy]:
    """Replace the tenant's policy (admin) and return it as stored."""
    return Call("PUT", "/v1/policy", _reader(TenantPolicy), json=_wire(as_model(TenantPolicy, policy)))


@_route("POST", "/v1/recall")
def recall(body: RecallRequest | Body | str) -> Call[RecallResponse]:
    """Return ranked memories of the caller's scope and the formatted context block."""
    request = as_model(RecallRequest, {"query": body} if isinstance(body, str) else body)
    return Call("POST", "/v1/recall", _reader(RecallResponse), json=_wire(request))


@_route("POST", "/v1/keys")
def create_key(body: KeyCreateRequest | Body) -> Call[KeyCreated]:
    """Create a key (admin); the token is in ``key`` and shown only this once."""
    return Call("POST", "/v1/keys", _reader(KeyCreated), json=_wire(as_model(KeyCreateRequest, body)))


@_route("GET", "/v1/keys")
def list_keys() -> Call[KeyList]:
    """Return every key of the tenant (admin); secrets are never returned."""
    return Call("GET", "/v1/keys", _reader(KeyList))


@_route("DELETE", "/v1/keys/{key_id}")
def revoke_key(key_id: str) -> Call[None]:
    """Revoke a key of the tenant (admin)."""
    return Call("DELETE", f"/v1/keys/{_id(key_id)}", _none)
