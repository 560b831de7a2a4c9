"""The server's background work, started and stopped with it: embedding, scheduled jobs, webhooks,
model jobs.

The embedding worker gives new memories their vectors; the supervisor runs the scheduled jobs
(usage counts, aging); the webhook deliverer sends the change feed to its endpoints; with a model
configured, the extraction queue's workers run beside the server, by default in a process of their
own so recall never shares this interpreter's lock with them. None of it runs on a request's path.
"""

from __future__ import annotations

from engramdb.config import Settings
from engramdb.core.foreground import Foreground
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import EmbeddingWorker
from engramdb.jobs.extraction import ExtractionWorker, WorkerProcess
from engramdb.jobs.supervisor import Supervisor, server_jobs
from engramdb.jobs.webhooks import WebhookWorker


class BackgroundJobs:
    """What one server runs in the background, over its service's store and embedder."""

    def __init__(self, service: MemoryService, settings: Settings) -> None:
        shared = self._shared = service.shared
        if settings.llm.configured:  # an extraction worker process (ours or `engram assist work`) reads the count
            shared.foreground = Foreground.shared(settings.recalls_file())
            shared.foreground.reset()
        self.embedding = EmbeddingWorker(
            shared.store,
            shared.embedder,
            shared.written,
            batch_size=settings.embed_batch_size,
            poll_seconds=settings.embed_poll_seconds,
            anchors=shared.anchors,
        )
        self.supervisor = shared.supervisor = Supervisor(
            server_jobs(
                shared.store,
                shared.usage,
                aging_seconds=settings.aging_interval_seconds,
                usage_seconds=settings.usage_flush_seconds,
                recalling=lambda: shared.foreground.here(),
            )
        )
        self.webhooks = (
            WebhookWorker(shared.store, settings.webhooks, service.webhooks.keys) if settings.webhooks.deliver else None
        )
        self.extractors: ExtractionWorker | WorkerProcess | None = None
        if settings.llm.configured and settings.llm.workers > 0:
            self.extractors = (
                WorkerProcess(settings)
                if settings.llm.worker_process
                else ExtractionWorker(service, threads=settings.llm.workers)
            )

    def start(self) -> None:
        self.embedding.start()
        self.supervisor.start()
        if self.webhooks is not None:
            self.webhooks.start()
        if self.extractors is not None:
            self.extractors.start()

    def stop(self) -> None:
        """Stop every worker, then write the last few seconds of use counts."""
        self.supervisor.stop()
        if self.webhooks is not None:
            self.webhooks.stop()
        self.embedding.stop()
        if self.extractors is not None:
            self.extractors.stop()
        self._shared.usage.flush(self._shared.store)

    def release(self) -> None:
        """Let go of the recalls-in-flight file the model's workers read (if this server made one)."""
        self._shared.foreground.close()
        self._shared.foreground = Foreground()
