"""The REST surface: FastAPI over ``MemoryService``, its routes built from the registry."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Route

from engramdb import __version__, metrics
from engramdb.api import problems
from engramdb.api.guard import RateLimiter, RequestGuard
from engramdb.api.mcp import http_endpoint
from engramdb.api.observe import Observe, install_metrics
from engramdb.api.openapi import install_docs
from engramdb.api.readiness import Readiness
from engramdb.api.routes import add_route
from engramdb.api.ui import install_ui
from engramdb.config import Settings, tune_process
from engramdb.core.embedding import Embedder, make_embedder
from engramdb.core.foreground import Foreground
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import EmbeddingWorker
from engramdb.jobs.extraction import ExtractionWorker, WorkerProcess
from engramdb.jobs.supervisor import Supervisor, server_jobs
from engramdb.models.operations import OPERATIONS
from engramdb.storage.port import Store
from engramdb.storage.registry import open_store

log = logging.getLogger(__name__)

DESCRIPTION = (
    "Long-term memory for LLM agents: scoped, audited, hybrid recall. Send a key as "
    "`Authorization: Bearer egm.<tenant>.<keyId>.<secret>`. JSON is camelCase; every error is problem "
    "JSON `{code, message, field, ...}`."
)


def _supervisor(store: Store, service: MemoryService, settings: Settings) -> Supervisor:
    """The jobs this server runs on a schedule (jobs/supervisor.py): usage counts, aging."""
    return Supervisor(
        server_jobs(
            store,
            service.usage,
            aging_seconds=settings.aging_interval_seconds,
            usage_seconds=settings.usage_flush_seconds,
            recalling=lambda: service.foreground.here(),
        )
    )


def create_app(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    run_worker: bool = True,
    owns_process: bool = False,
) -> FastAPI:
    """Return the app (store and embedder: the settings' by default; owns_process: `engram serve`)."""
    settings = settings or Settings()
    tune_process()
    store = store or open_store(settings.storage_url(), **settings.store_options())
    embedder = embedder or make_embedder(settings.embedder, api_key=settings.embedder_api_key)
    service = MemoryService(store, embedder, settings)
    mcp = http_endpoint(service)  # MCP over streamable HTTP at /mcp (bearer key)
    readiness = Readiness(store, embedder, settings.retrieval, freeze_after=owns_process)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        readiness.start()  # /healthz answers at once; /readyz once the model and recent scopes are loaded
        if settings.llm.configured:  # an extraction worker process (ours or `engram models work`) reads the count
            service.foreground = Foreground.shared(settings.recalls_file())
            service.foreground.reset()
        worker = EmbeddingWorker(
            store,
            embedder,
            service.written,
            batch_size=settings.embed_batch_size,
            poll_seconds=settings.embed_poll_seconds,
            anchors=service.anchors,
        )
        supervisor = service.supervisor = _supervisor(store, service, settings)
        # With a model, the extraction queue's workers (never on a request's path), by default in a
        # process of their own: recall does not share this process's interpreter lock with them.
        extractors: ExtractionWorker | WorkerProcess | None = None
        if settings.llm.configured and settings.llm.workers > 0:
            extractors = (
                WorkerProcess(settings)
                if settings.llm.worker_process
                else ExtractionWorker(service, threads=settings.llm.workers)
            )
        if run_worker:
            worker.start()
            supervisor.start()
            if extractors is not None:
                extractors.start()
        try:
            async with mcp.running():
                yield
        finally:
            if run_worker:
                supervisor.stop()
                worker.stop()
                if extractors is not None:
                    extractors.stop()
                service.usage.flush(store)  # the last few seconds of use counts
            readiness.stop()
            service.foreground.close()
            service.foreground = Foreground()
            store.close()

    app = FastAPI(
        title="EngramDB",
        version=__version__,
        summary="Long-term memory for LLM agents.",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service, app.state.store = service, store
    app.router.routes.append(Route("/mcp", mcp.app, include_in_schema=False))  # an ASGI app, authenticated
    app.router.routes.append(Route("/readyz", readiness.endpoint, include_in_schema=False))
    _guard_and_watch(app, settings, store)
    install_docs(app)
    for op in sorted(OPERATIONS, key=lambda op: op.path.count("{")):  # /v1/records/schema before /{record_id}
        add_route(app, op)
    install_metrics(app)
    install_ui(app)  # the dashboard at /ui (and / redirects there)
    return app


def _guard_and_watch(app: FastAPI, settings: Settings, store: Store) -> None:
    """The guard in front of the routes (body limit, key first, rate and in-flight limits), and
    the metrics and access log outside it, so its refusals are timed, counted and logged too."""
    rate = settings.rate_limit_per_second
    limiter = RateLimiter(rate, settings.rate_limit_burst) if rate else None
    app.add_middleware(
        RequestGuard,
        store=store,
        max_body_bytes=settings.max_body_bytes,
        limiter=limiter,
        max_in_flight=settings.max_in_flight,
    )
    app.add_middleware(Observe)
    metrics.watch_backlog(lambda: _backlog(store))
    problems.install(app)  # its request-id boundary goes outside both, so refusals carry the id


def _backlog(store: Store) -> float:
    """Rows waiting for a vector in every tenant (pending, or failed: due again or not)."""
    return float(sum(store.tenant(name).embedding_backlog() for name in store.tenant_names()))
