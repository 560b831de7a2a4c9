"""The REST surface: FastAPI over ``MemoryService``, its routes built from the registry."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from starlette.routing import Route

from engramdb import __version__, metrics, traces
from engramdb.api import problems
from engramdb.api.background import BackgroundJobs
from engramdb.api.guard import RateLimiter, RequestGuard
from engramdb.api.lane import FairLane
from engramdb.api.mcp.mount import McpMount
from engramdb.api.methods import MethodsByPath
from engramdb.api.observe import Observe, install_metrics
from engramdb.api.openapi import install_docs
from engramdb.api.readiness import Readiness
from engramdb.api.routes import operation_routes
from engramdb.api.tracing import Traced
from engramdb.api.ui import install_ui
from engramdb.config import Settings, tune_process
from engramdb.core.embedder_choice import resolve_spec
from engramdb.core.embedding import Embedder, make_embedder
from engramdb.core.embedding_openai import OpenAICompatibleEmbedder
from engramdb.core.service import MemoryService
from engramdb.storage.port import Store
from engramdb.storage.registry import open_store

log = logging.getLogger(__name__)

DESCRIPTION = (
    "Long-term memory for LLM agents: scoped, audited, hybrid recall. Send a key as "
    "`Authorization: Bearer egm.<tenant>.<keyId>.<secret>`. JSON is camelCase; every error is problem "
    "JSON `{code, message, field, ...}`."
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
    if embedder is None:  # `auto` resolved once, so the extraction worker it starts runs the same model
        settings = settings.model_copy(update={"embedder": resolve_spec(settings.embedder, store)})
        embedder = make_embedder(settings.embedder, api_key=settings.embedder_api_key)
    service = MemoryService(store, embedder, settings)
    lane = recall_lane(settings, embedder)
    mcp = McpMount(service, lane=lane)  # MCP over streamable HTTP at /mcp (bearer key), built on its first request
    readiness = Readiness(store, embedder, settings.retrieval, freeze_after=owns_process)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        readiness.start()  # /healthz answers at once; /readyz once the model and recent scopes are loaded
        jobs = BackgroundJobs(service, settings)
        if run_worker:
            jobs.start()
        try:
            async with mcp.running():
                yield
        finally:
            if run_worker:
                jobs.stop()
            readiness.stop()
            jobs.release()
            store.close()

    app = FastAPI(
        title="EngramDB",
        version=__version__,
        summary="Long-term memory for LLM agents.",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        # FastAPI's own spans would record the path and query string sent (text); ours replace them.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.service, app.state.store = service, store
    app.state.recall_lane = lane
    _watch_lane(lane)
    app.router.routes.append(Route("/mcp", mcp, include_in_schema=False))  # an ASGI app, authenticated
    app.router.routes.append(Route("/readyz", readiness.endpoint, include_in_schema=False))
    _guard_and_watch(app, settings, store)
    install_docs(app)
    app.router.routes.extend(operation_routes())
    install_metrics(app)
    install_ui(app)  # the dashboard at /ui (and / redirects there)
    return app


def _guard_and_watch(app: FastAPI, settings: Settings, store: Store) -> None:
    """The guard in front of the routes (body limit, key first, rate and in-flight limits), and
    the metrics and access log outside it, so its refusals are timed, counted and logged too."""
    rate = settings.rate_limit_per_second
    limiter = RateLimiter(rate, settings.rate_limit_burst) if rate else None
    app.add_middleware(MethodsByPath, routes=app.routes)  # inside the guard: a HEAD is keyed and counted too
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
    if traces.on():  # outermost: the server span covers everything, every log line carries its trace id
        app.add_middleware(Traced)


def recall_lane(settings: Settings, embedder: Embedder) -> FairLane | None:
    """How many REST recalls run at once: ``recall_threads``, or by default one per CPU core when
    the question is embedded in this process. A remote embedder's recalls mostly wait on the network,
    so they keep the shared pool (None), where the waits overlap."""
    if settings.recall_threads:
        return FairLane(settings.recall_threads)
    if isinstance(embedder, OpenAICompatibleEmbedder):
        return None
    return FairLane(cores())


def _watch_lane(lane: FairLane | None) -> None:
    if lane is None:
        metrics.watch_recall_lane(lambda: 0.0, lambda: 0.0)
    else:
        metrics.watch_recall_lane(lambda: float(lane.running), lambda: float(lane.waiting))


def cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The CPU cores this process may use: its affinity, capped by a cgroup v2 CPU quota (the
    ``--cpus`` of a container, which the affinity does not show)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        return max(1, min(usable, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):  # no cgroup v2 file, or "max": no quota
        return usable


def _backlog(store: Store) -> float:
    """Rows waiting for a vector in every tenant (pending, or failed: due again or not)."""
    return float(sum(store.tenant(name).embedding_backlog() for name in store.tenant_names()))
