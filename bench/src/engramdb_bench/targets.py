"""Where an evaluation writes and asks: the service in this process, or a server over REST.

``InProcess`` calls ``MemoryService`` directly (one service per arm, one store). ``OverRest``
talks to a server's public HTTP API with an admin key: ``POST /v1/episodes/batch`` to write,
``GET /v1/episodes/{id}`` until every vector is ready, ``POST /v1/recall`` to ask. With no URL
it serves a fresh embedded store itself on 127.0.0.1, configured like ``engram serve``.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from engramdb.config import RetrievalSettings, Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import embed_batch
from engramdb.models.recall import RecallRequest, RecallResponse
from engramdb.sdk.client import Client
from engramdb.storage.registry import open_store

BATCH = 100  # the REST batch endpoint's maximum


class Target(Protocol):
    """What the runner needs from the system under evaluation."""

    def write(self, bodies: Sequence[EpisodeWrite]) -> list[tuple[str, bool]]:
        """Write episodes; return (id, created) per body, in order."""

    def settle(self) -> int:
        """Wait until every written memory has its vector; return how many were embedded."""

    def recall(self, arm: str, request: RecallRequest) -> RecallResponse:
        """Ask under one arm."""

    def retrieval(self) -> dict[str, Any]:
        """The retrieval settings of each arm, for the report."""

    def close(self) -> None: ...


class InProcess:
    """The production service in this process, one per arm over one store."""

    def __init__(self, home: Path, embedder: Embedder, tenant: str, arms: dict[str, RetrievalSettings]) -> None:
        base = Settings(home=home, database_url=None)  # the embedded store, whatever the environment says
        self.store = open_store(base.storage_url(), **base.store_options())
        self.tenant = self.store.tenant(tenant, create=True)
        self.embedder = embedder
        self.caller = Caller(tenant=tenant, key_id="engram-eval", role="admin")
        self.services = {
            arm: MemoryService(self.store, embedder, base.model_copy(update={"retrieval": settings}))
            for arm, settings in arms.items()
        }

    def write(self, bodies: Sequence[EpisodeWrite]) -> list[tuple[str, bool]]:
        service = next(iter(self.services.values()))
        return [(r.id, r.created) for r in service.writes.write_episodes(self.caller, list(bodies))]

    def settle(self) -> int:
        embedded = 0
        while done := embed_batch(self.tenant, self.embedder, 256):
            embedded += done
        return embedded

    def recall(self, arm: str, request: RecallRequest) -> RecallResponse:
        return self.services[arm].reads.recall(self.caller, request)

    def retrieval(self) -> dict[str, Any]:
        return {arm: s.shared.settings.retrieval.model_dump() for arm, s in self.services.items()}

    def close(self) -> None:
        self.store.close()


class OverRest:
    """A server's public REST API through the SDK (the server's own settings: one arm, ``hybrid``)."""

    def __init__(self, url: str, key: str, *, poll_seconds: float = 0.2, timeout_s: float = 1800) -> None:
        self.client = Client(url, key, timeout=60)
        self.poll_seconds = poll_seconds
        self.timeout_s = timeout_s
        self._unsettled: list[tuple[str, dict[str, Any]]] = []  # (event id, its scope as query)

    def write(self, bodies: Sequence[EpisodeWrite]) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        scopes = [b.named_scope_fields() for b in bodies]  # GET names the scope as query parameters
        for start in range(0, len(bodies), BATCH):
            chunk = [b.model_dump(by_alias=True, exclude_none=True, mode="json") for b in bodies[start : start + BATCH]]
            for item in self.client.write_episode_batch(chunk).results:
                if item["status"] not in (200, 201):
                    raise RuntimeError(f"the server refused an episode: {item}")
                out.append((item["id"], item["status"] == 201))
        # Every id, not only new ones: a server may still be embedding rows an earlier run wrote.
        self._unsettled += [(i, scope) for (i, _), scope in zip(out, scopes, strict=True)]
        return out

    def settle(self) -> int:
        """Poll every written episode until its vector is ready (a failed one is retried by the
        server's worker with backoff, so it counts as pending until the deadline)."""
        embedded = len(self._unsettled)
        deadline = time.monotonic() + self.timeout_s
        while self._unsettled:
            pending = []
            for event_id, scope in self._unsettled:
                embedding = self.client.get_episode(event_id, scope=scope).embedding
                if embedding.state != "ready":
                    pending.append((event_id, scope))
            self._unsettled = pending
            if pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(pending)} episodes still without a vector, e.g. {embedding}")
                time.sleep(self.poll_seconds)
        return embedded

    def recall(self, arm: str, request: RecallRequest) -> RecallResponse:
        return self.client.recall(request)

    def retrieval(self) -> dict[str, Any]:
        return {"hybrid": "the server's own settings"}

    def close(self) -> None:
        self.client.close()


class OwnServer(OverRest):
    """A fresh embedded server on 127.0.0.1, configured from the environment like ``engram serve``."""

    def __init__(self, home: Path | None = None, embedder: str = "minilm") -> None:
        from engramdb.api.loopback import LoopbackServer
        from engramdb.api.rest import create_app

        self._folder = home or Path(tempfile.mkdtemp(prefix="engram-eval-rest-"))
        self.settings = Settings(home=self._folder, database_url=None, embedder=embedder)
        self.store = open_store(self.settings.storage_url(), **self.settings.store_options())
        try:
            self.store.tenant("eval", create=True)
            key, _ = auth.create_key(self.store, tenant="eval", role="admin", grant={}, label="engram eval")
            self.server = LoopbackServer(create_app(self.settings, store=self.store))
            self.server.start()
        except BaseException:
            self.store.close()
            raise
        super().__init__(self.server.url, key)

    def retrieval(self) -> dict[str, Any]:
        return {"hybrid": self.settings.retrieval.model_dump()}

    def close(self) -> None:
        super().close()
        self.server.stop()  # the app's shutdown closes the store it was given
