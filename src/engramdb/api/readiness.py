"""Readiness, apart from liveness: ``/healthz`` answers as soon as the server runs; ``/readyz``
answers 200 only once the embedding model is loaded, the scopes recall used most recently are
back in memory, and the storage answers.

The warm-up runs in a thread started with the server, so a large store (a minute to load a
million memories) never makes the server look dead: a probe keeps getting 200 from ``/healthz``
and 503 from ``/readyz`` until the first recall would be as fast as the hundredth.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse

from engramdb.config import RetrievalSettings
from engramdb.core.embedding import Embedder
from engramdb.core.reads import TimeTravel, lifecycle_filter
from engramdb.core.recall import recall
from engramdb.errors import EngramError
from engramdb.storage.port import Store

log = logging.getLogger(__name__)


class Readiness:
    """The server's warm-up and what ``/readyz`` answers about it."""

    def __init__(
        self, store: Store, embedder: Embedder, retrieval: RetrievalSettings, *, freeze_after: bool = False
    ) -> None:
        self._store = store
        self._freeze_after = freeze_after
        self._embedder = embedder
        self._retrieval = retrieval
        self._done = threading.Event()
        self._stopping = threading.Event()
        self._report: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._warm, name="engram-warm-up", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the warm-up to end at its next scope and wait a little for it."""
        self._stopping.set()
        self._thread.join(timeout)

    def _warm(self) -> None:
        started = time.perf_counter()
        report: dict[str, Any] = {"model": "loaded", "scopesWarmed": 0}
        try:
            # A cold first recall (~0.7 s to load the model) would pass the SDK's 300 ms
            # fail-open budget, and the agent would silently get no memory.
            self._embedder.embed(["warm up"])
        except Exception as error:  # the server still serves: writes land, recall reports the failure
            log.warning("the embedder failed to warm up; recall will try it again", exc_info=True)
            why = error.message if isinstance(error, EngramError) else type(error).__name__  # ours say what to do
            report["model"] = f"failed: {why}"
        try:
            warmed = self._store.warm(self._stopping.is_set, vector_model=self._embedder.model_id)
            report["scopesWarmed"] = len(warmed)
            if warmed:  # one recall through the whole path: what runs once per process runs now
                tenant, scope_key = warmed[0]
                recall(
                    self._store.tenant(tenant),
                    self._embedder,
                    scope_key=scope_key,
                    query="warm up",
                    filt=lifecycle_filter(TimeTravel(), sources=("EPISODE", "MEMORY_FACT")),
                    limit=8,
                    settings=self._retrieval,
                )
        except Exception:  # the warm-up boundary: recall loads each scope on first use instead
            log.exception("warming the recently used scopes failed")
            report["scopesWarmed"] = "failed"
        if self._freeze_after:
            # The copies just loaded are long-lived objects (~0.2 a memory): left to the collector, a
            # full collection walks them all on some early request (~60 ms at a million memories).
            # Collect once, then keep them out of later collections (refcounts still free them). Only
            # in a server's own process: frozen cycles are never collected.
            gc.collect()
            gc.freeze()
        report["warmupMs"] = round((time.perf_counter() - started) * 1000, 1)
        log.info("warm-up done in %.0f ms: %s scopes", report["warmupMs"], report["scopesWarmed"])
        self._report = report
        self._done.set()

    async def endpoint(self, _: Request) -> JSONResponse:
        """``GET /readyz``: 200 when ready, else 503 with what is missing."""
        if not self._done.is_set():
            return JSONResponse({"status": "warming"}, status_code=503)
        body = {"status": "ready", **self._report}
        try:
            await anyio.to_thread.run_sync(self._store.tenant_names)
        except EngramError as error:
            return JSONResponse({**body, "status": "unavailable", "storage": error.message}, status_code=503)
        if self._report["model"] != "loaded":
            return JSONResponse({**body, "status": "unavailable"}, status_code=503)
        return JSONResponse(body)
