"""The reference's memory: one float32 matrix per scope, searched exactly with a dot product."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from engramdb.core.embedding_port import Embedder

Matrix = npt.NDArray[np.float32]


@dataclass
class _Scope:
    ids: list[str] = field(default_factory=list)
    vectors: Matrix | None = None


class ExactIndex:
    """Vectors by scope; ``add`` embeds in batches, ``search`` embeds the query and ranks every row."""

    def __init__(self, embedder: Embedder, batch_size: int = 64) -> None:
        self.embedder, self.batch_size = embedder, batch_size
        self._scopes: dict[str, _Scope] = {}

    def add(self, scope: str, ids: Sequence[str], texts: Sequence[str]) -> int:
        held = self._scopes.setdefault(scope, _Scope())
        batches = [
            self.embedder.embed(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)
        ]
        if not batches:
            return 0
        fresh = np.vstack(batches).astype(np.float32, copy=False)
        held.vectors = fresh if held.vectors is None else np.vstack([held.vectors, fresh])
        held.ids.extend(ids)
        return len(ids)

    def search(self, scope: str, query: str, limit: int) -> list[tuple[str, float]]:
        held = self._scopes.get(scope)
        if held is None or held.vectors is None:
            return []
        scores = held.vectors @ self.embedder.embed([query])[0]
        top = np.argsort(-scores, kind="stable")[:limit]
        return [(held.ids[i], float(scores[i])) for i in top]
