"""The rows waiting for their vectors: the embedding job's reads and writes of a tenant store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engramdb.storage.rows import EmbedJob, Vector


class EmbeddingQueue(Protocol):
    """A tenant store's rows waiting for a vector (part of ``TenantStore``)."""

    def embedding_jobs(self, limit: int, now: str) -> list[EmbedJob]:
        """Return rows whose vector is pending, or failed and due for a retry."""
        ...

    def save_embeddings(
        self, rowids: Sequence[int], vectors: Vector, model: str, *, texts: Sequence[str] | None = None
    ) -> None:
        """Store vectors beside their rows and mark them ready; with ``texts`` (the texts embedded), only
        where a row's text to embed is still that text: a row deleted meanwhile whose rowid a new row
        took (SQLite reuses the largest), or a row whose text changed, keeps no vector of another text."""
        ...

    def record_embedding_failure(self, rowids: Sequence[int], error: str, next_attempt_at: Sequence[str]) -> None:
        """Mark rows failed with the error and when to retry."""
        ...

    def embedding_counts(self) -> dict[str, int]:
        """Return how many rows are pending, ready and failed."""
        ...

    def embedding_backlog(self) -> int:
        """Rows waiting for a vector (pending or failed), from the due index (embedding_counts reads all)."""
        ...
