"""The REST surface: FastAPI over ``MemoryService``. Handlers stay one call deep."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, Query, Request, Response

from engramdb import __version__
from engramdb.api import problems
from engramdb.api.mcp import http_endpoint
from engramdb.config import Settings, tune_process
from engramdb.contract.events import (
    EpisodeWrite,
    FactWrite,
    PrivacyScope,
    ScopeFields,
    check_date_time,
    check_keepable,
)
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder, make_embedder
from engramdb.core.policy import TenantPolicy
from engramdb.core.service import MemoryService, TimeTravel
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.jobs.embedding import EmbeddingWorker
from engramdb.models.api import (
    AuditPage,
    CorrectRequest,
    EditAndApprove,
    EpisodeBatch,
    EpisodeBatchResult,
    FactHistory,
    FactList,
    Health,
    KeyCreated,
    KeyCreateRequest,
    KeyList,
    KeyView,
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
from engramdb.storage.port import KeyRecord, Store
from engramdb.storage.registry import open_store

log = logging.getLogger(__name__)


def _scope_query(
    agent_id: Annotated[str | None, Query(alias="agentId")] = None,
    profile_id: Annotated[str | None, Query(alias="profileId")] = None,
    privacy_scope: Annotated[PrivacyScope | None, Query(alias="privacyScope")] = None,
    participant_scope_hash: Annotated[str | None, Query(alias="participantScopeHash")] = None,
    sandbox_eligible: Annotated[bool | None, Query(alias="sandboxEligible")] = None,
) -> ScopeFields:
    """Scope fields named in the query string (for GETs); the key's grant supplies the rest."""
    named = {
        "agentId": agent_id,
        "profileId": profile_id,
        "privacyScope": privacy_scope,
        "participantScopeHash": participant_scope_hash,
        "sandboxEligible": sandbox_eligible,
    }
    return ScopeFields.model_validate({k: v for k, v in named.items() if v is not None})


NamedScope = Annotated[ScopeFields, Depends(_scope_query)]


def _time_travel(
    as_of: Annotated[str | None, Query(alias="asOf")] = None,
    valid_at: Annotated[str | None, Query(alias="validAt")] = None,
    include_history: Annotated[bool, Query(alias="includeHistory")] = False,
) -> TimeTravel:
    """``asOf`` (record time), ``validAt`` (valid time) and ``includeHistory`` for GETs."""
    for name, value in (("asOf", as_of), ("validAt", valid_at)):
        if value is not None:
            try:
                check_keepable(check_date_time(value))
            except ValueError as error:
                raise InvalidInputError(f"{name} {error}", field=name) from error
    return TimeTravel(as_of, valid_at, include_history)


def _caller(request: Request) -> Caller:
    """The caller a request's bearer key belongs to (401 without a valid key)."""
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else None
    return auth.authenticate(request.app.state.store, token)


Authed = Annotated[Caller, Depends(_caller)]


def create_app(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    run_worker: bool = True,
) -> FastAPI:
    """Return the app. Store and embedder default to those the settings name."""
    settings = settings or Settings()
    tune_process()
    store = store or open_store(settings.storage_url(), **settings.store_options())
    embedder = embedder or make_embedder(settings.embedder, api_key=settings.embedder_api_key)
    service = MemoryService(store, embedder, settings)
    mcp = http_endpoint(service)  # MCP over streamable HTTP at /mcp (bearer key)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        worker = EmbeddingWorker(
            store, embedder, service.written,
            batch_size=settings.embed_batch_size, poll_seconds=settings.embed_poll_seconds,
        )  # fmt: skip
        if run_worker:
            worker.start()
        try:
            async with mcp.running():
                yield
        finally:
            if run_worker:
                worker.stop()
            store.close()

    app = FastAPI(
        title="EngramDB",
        version=__version__,
        summary="Long-term memory for LLM agents: scoped, audited, hybrid recall.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.store = store
    app.add_route("/mcp", mcp.app, include_in_schema=False)
    problems.install(app)

    @app.get("/healthz", tags=["service"])
    def healthz() -> Health:
        """Liveness and what the server runs on."""
        return service.health()

    @app.post("/v1/episodes", status_code=201, tags=["memories"])
    def write_episode(body: EpisodeWrite, who: Authed, response: Response) -> WriteResponse:
        """Store an episode (201), or return the one already stored with this id (200)."""
        result = service.write_episode(who, body)
        response.status_code = 201 if result.created else 200
        return result

    @app.post("/v1/episodes/batch", tags=["memories"])
    def write_episode_batch(body: EpisodeBatch, who: Authed) -> EpisodeBatchResult:
        """Store up to 100 episodes in one transaction; each item gets its own status and body."""
        return EpisodeBatchResult(results=service.write_episode_batch(who, body.episodes))

    @app.post("/v1/facts", status_code=201, tags=["memories"])
    def write_fact(
        body: FactWrite,
        who: Authed,
        response: Response,
        origin: Annotated[Literal["stated", "derived"], Query(description="derived: a model wrote it")] = "stated",
    ) -> WriteResponse:
        """Store a fact (201), or return the one already stored with this id (200).

        The tenant's trust policy decides, by trust class and origin, whether it is current at
        once or waits for review (``outcome: parked``, status ``pending_review``).
        """
        result = service.write_fact(who, body, origin=origin)
        response.status_code = 201 if result.created else 200
        return result

    @app.get("/v1/episodes/{event_id}", tags=["memories"])
    def get_episode(event_id: str, who: Authed, scope: NamedScope) -> MemoryView:
        """One episode of the caller's scope, with its embedding state."""
        return service.get_memory(who, "EPISODE", event_id, scope)

    @app.get("/v1/facts/{fact_id}", tags=["memories"])
    def get_fact(fact_id: str, who: Authed, scope: NamedScope) -> MemoryView:
        """One fact of the caller's scope, with its lifecycle and embedding state."""
        return service.get_memory(who, "MEMORY_FACT", fact_id, scope)

    @app.get("/v1/facts", tags=["memories"])
    def list_facts(
        who: Authed,
        scope: NamedScope,
        when: Annotated[TimeTravel, Depends(_time_travel)],
        subject_key: Annotated[str | None, Query(alias="subjectKey")] = None,
        kind: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> FactList:
        """Current facts of the caller's scope (or as of / valid at a time, or with history)."""
        return service.list_facts(who, scope, subject_key=subject_key, kind=kind, limit=limit,
                                  when=when)  # fmt: skip

    @app.post("/v1/facts/{fact_id}/correct", status_code=201, tags=["lifecycle"])
    def correct_fact(fact_id: str, body: CorrectRequest, who: Authed, response: Response) -> WriteResponse:
        """Replace an active fact with a corrected one; the old value is tombstoned."""
        result = service.correct_fact(who, fact_id, body)
        response.status_code = 201 if result.created else 200
        return result

    @app.post("/v1/facts/{fact_id}/retract", tags=["lifecycle"])
    def retract_fact(fact_id: str, body: RetractRequest, who: Authed) -> MemoryView:
        """Retract an active fact; its value is tombstoned."""
        return service.retract_fact(who, fact_id, body)

    @app.get("/v1/facts/{fact_id}/history", tags=["lifecycle"])
    def fact_history(fact_id: str, who: Authed, scope: NamedScope) -> FactHistory:
        """The whole supersession chain of a fact, oldest first, with reasons and tombstones."""
        return service.fact_history(who, fact_id, scope)

    @app.get("/v1/tombstones", tags=["lifecycle"])
    def list_tombstones(
        who: Authed,
        scope: NamedScope,
        subject_key: Annotated[str | None, Query(alias="subjectKey")] = None,
        kind: str | None = None,
        include_lifted: Annotated[bool, Query(alias="includeLifted")] = False,
    ) -> TombstoneList:
        """Values refused in the caller's scope."""
        return service.list_tombstones(who, scope, subject_key=subject_key, kind=kind,
                                       include_lifted=include_lifted)  # fmt: skip

    @app.post("/v1/tombstones/{tombstone_id}/lift", tags=["lifecycle"])
    def lift_tombstone(tombstone_id: str, body: LiftRequest, who: Authed) -> TombstoneView:
        """Let a tombstoned value become current again (reviewer or admin keys)."""
        return service.lift_tombstone(who, tombstone_id, body)

    @app.get("/v1/review", tags=["review"])
    def review_queue(
        who: Authed,
        kind: str | None = None,
        subject_key: Annotated[str | None, Query(alias="subjectKey")] = None,
        older_than_seconds: Annotated[float | None, Query(alias="olderThanSeconds", ge=0)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> ReviewQueue:
        """Facts awaiting review in the tenant, oldest first (reviewer or admin keys)."""
        return service.review_queue(who, kind=kind, subject_key=subject_key,
                                    older_than_seconds=older_than_seconds, limit=limit)  # fmt: skip

    @app.post("/v1/review/{fact_id}/approve", tags=["review"])
    def approve(fact_id: str, body: ReviewDecision, who: Authed) -> WriteResponse:
        """Make a pending fact current (tombstones and the age guard apply)."""
        return service.approve(who, fact_id, body)

    @app.post("/v1/review/{fact_id}/reject", tags=["review"])
    def reject(fact_id: str, body: RejectDecision, who: Authed) -> MemoryView:
        """Reject a pending fact, saying why; its value is tombstoned with the reason."""
        return service.reject(who, fact_id, body)

    @app.post("/v1/review/{fact_id}/edit-and-approve", tags=["review"])
    def edit_and_approve(fact_id: str, body: EditAndApprove, who: Authed) -> WriteResponse:
        """Replace a pending fact's text with the reviewer's, and approve it."""
        return service.edit_and_approve(who, fact_id, body)

    @app.get("/v1/audit", tags=["audit"])
    def audit(
        who: Authed,
        after: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> AuditPage:
        """The tenant's hash-chained audit log, in order (reviewer or admin keys)."""
        return service.audit_page(who, after=after, limit=limit)

    @app.get("/v1/policy", tags=["policy"])
    def get_policy(who: Authed) -> TenantPolicy:
        """The tenant's policy (multi-valued kinds, what a tombstoned value does)."""
        return service.get_policy(who)

    @app.put("/v1/policy", tags=["policy"])
    def put_policy(body: TenantPolicy, who: Authed) -> TenantPolicy:
        """Replace the tenant's policy (admin keys only; audited)."""
        return service.set_policy(who, body)

    @app.post("/v1/recall", tags=["recall"])
    def recall(body: RecallRequest, who: Authed) -> RecallResponse:
        """Ranked memories of the caller's scope and the formatted context block."""
        return service.recall(who, body)

    @app.post("/v1/keys", status_code=201, tags=["keys"])
    def create_key(body: KeyCreateRequest, who: Authed) -> KeyCreated:
        """Create a key in the caller's tenant (admin keys only); the token is shown once."""
        auth.require(who, "keys.manage")
        token, record = auth.create_key(
            store, tenant=who.tenant, role=body.role, grant=body.grant.named_scope_fields(),
            label=body.label, actor=who,
        )  # fmt: skip
        return KeyCreated(key=token, **_key_view(record).model_dump())

    @app.get("/v1/keys", tags=["keys"])
    def list_keys(who: Authed) -> KeyList:
        """Every key of the caller's tenant (admin keys only); secrets are never returned."""
        auth.require(who, "keys.manage")
        return KeyList(keys=[_key_view(k) for k in store.tenant(who.tenant).list_keys()])

    @app.delete("/v1/keys/{key_id}", status_code=204, tags=["keys"])
    def revoke_key(key_id: str, who: Authed) -> Response:
        """Revoke a key of the caller's tenant (admin keys only)."""
        auth.require(who, "keys.manage")
        if not auth.revoke_key(store, tenant=who.tenant, key_id=key_id, actor=who):
            raise NotFoundError(f"no active key {key_id}", field="keyId")
        return Response(status_code=204)

    return app


def _key_view(record: KeyRecord) -> KeyView:
    return KeyView(
        key_id=record.key_id,
        role=record.role,
        grant=json.loads(record.grant_json),
        label=record.label,
        created_at=record.created_at,
        revoked_at=record.revoked_at,
    )
