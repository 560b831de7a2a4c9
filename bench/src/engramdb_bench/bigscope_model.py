"""The big-scope benchmark's vocabulary: layouts, where a backend's data lives, scopes, queries."""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.storage.port import Store
from engramdb.storage.registry import open_store
from engramdb_bench.bigscope_corpus import Corpus
from engramdb_bench.lifecycle_cost import PrecomputedEmbedder

Progress = Callable[[str], None]
TENANT = "big"


@dataclass(frozen=True)
class Layout:
    """How many memories, over how many scopes."""

    total: int
    scopes: int

    @property
    def name(self) -> str:
        return f"one:{self.total}" if self.scopes == 1 else f"spread:{self.total}:{self.scopes}"

    @classmethod
    def parse(cls, text: str) -> Layout:
        kind, *numbers = text.split(":")
        if kind == "one" and len(numbers) == 1:
            return cls(int(numbers[0]), 1)
        if kind == "spread" and len(numbers) == 2:
            return cls(int(numbers[0]), int(numbers[1]))
        raise ValueError(f"a layout is one:N or spread:N:SCOPES, not {text!r}")


@dataclass
class Target:
    """Where one backend's data lives: a SQLite folder, or a PostgreSQL URL and schema."""

    backend: str
    home: Path
    url: str | None = None
    schema: str | None = None

    def settings(self, **extra: Any) -> Settings:
        values: dict[str, Any] = {"home": self.home, "embedder": "minilm", **extra}
        if self.url:
            values.update(database_url=self.url, pg_schema=self.schema)
        return Settings(**values)

    def open(self, **extra: Any) -> Store:
        settings = self.settings(**extra)
        return open_store(settings.storage_url(), **settings.store_options())

    def env(self) -> dict[str, str]:
        env = {**os.environ, "ENGRAM_HOME": str(self.home), "ENGRAM_EMBEDDER": "minilm"}
        if self.url:
            env.update(ENGRAM_DATABASE_URL=self.url, ENGRAM_PG_SCHEMA=str(self.schema))
        return env


def scope_of(i: int) -> dict[str, Any]:
    return {
        "agentId": "bench",
        "profileId": "bigscope",
        "privacyScope": "shared",
        "participantScopeHash": hash_scope([f"team-{i}"]),
        "sandboxEligible": False,
    }


def key_of(i: int) -> str:
    return auth.scope_key(Scope.model_validate(scope_of(i)))


@dataclass
class Asked:
    """The timed queries: the scope index each asks, its text and the model's vector of it."""

    scopes: list[int]
    texts: list[str]
    vectors: np.ndarray
    layout_scopes: int
    model: str  # the model the stored vectors are of: recall reads only vectors of its embedder's model

    @classmethod
    def draw(cls, corpus: Corpus, layout: Layout, n: int, seed: int) -> Asked:
        rng = random.Random(seed)
        picks = rng.sample(range(len(corpus.questions)), min(n, len(corpus.questions)))
        scopes = [rng.randrange(layout.scopes) for _ in picks]
        return cls(
            scopes, [corpus.questions[i] for i in picks], corpus.question_vectors[picks], layout.scopes, corpus.model
        )

    def embedder(self) -> PrecomputedEmbedder:
        return PrecomputedEmbedder(dict(zip(self.texts, self.vectors, strict=True)), self.model)


def pct(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    return {f"p{p}": round(float(np.percentile(values, p)), 2) for p in (50, 95, 99)} | {"n": len(values)}
