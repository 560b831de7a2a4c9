"""Options of ``engram bench recall`` and the state its stages share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engramdb.config import Settings
from engramdb.core.embedding import Embedder, FloatMatrix
from engramdb.errors import EngramError
from engramdb.storage.port import Store
from engramdb.storage.registry import open_store

Progress = Callable[[str], None]
VECTOR_MODES = ("auto", "full", "pool")


@dataclass
class BenchConfig:
    """Options of ``engram bench recall``."""

    sizes: Sequence[int] = (1_000, 10_000, 100_000)
    queries: int = 200
    embedder: str = "minilm"
    home: Path | None = None
    ingest_sample: int = 2_000
    batch_size: int = 500
    seed: int = 7
    vectors: str = "auto"  # auto | full | pool
    full_embed_budget_s: float = 60.0
    pool_noise: float = 0.35
    limit: int = 8
    profile_dir: Path | None = None

    def validate(self) -> None:
        """Raise EngramError naming the first bad option."""
        if not self.sizes or min(self.sizes) < 1:
            raise EngramError("sizes must be positive integers", field="--sizes")
        if self.queries < 1 or self.ingest_sample < 1:
            raise EngramError("--queries and --ingest-sample must be at least 1")
        if self.vectors not in VECTOR_MODES:
            raise EngramError("--vectors must be auto, full or pool", field="--vectors")


class RecordingEmbedder:
    """Delegates to an embedder and keeps every text's vector (the pool of real embeddings)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.vectors: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        out = self.inner.embed(texts)
        for text, vector in zip(texts, out, strict=True):
            self.vectors[text] = vector
        return out


@dataclass
class BenchRun:
    """One run: its options, data folder, settings, recording embedder and progress line."""

    config: BenchConfig
    home: Path
    settings: Settings
    embedder: RecordingEmbedder
    progress: Progress

    def open_store(self, home: Path | None = None) -> Store:
        """Return the embedded store under ``home`` (default: the run's folder), as a server opens it."""
        url = f"sqlite:///{home or self.home}"
        return open_store(url, synchronous=self.settings.sqlite_synchronous)
