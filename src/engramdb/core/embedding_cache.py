"""Recent query vectors: an agent asks the same question again (a retried turn, a poll, a
session replayed), and embedding it is most of a recall's time (~2 ms of ~4 on two cores)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from engramdb.core.embedding_port import Embedder, FloatMatrix


class QueryVectorCache:
    """An :class:`Embedder` that keeps the vectors of the last ``size`` single texts it embedded,
    keyed by model and text; batches (the embedding worker's) pass straight through.

    A cached vector is the array the model gave, read-only, so a hit answers exactly what a miss
    would have. Thread-safe: two threads missing the same text both embed it, and either result
    is kept.
    """

    def __init__(self, embedder: Embedder, size: int = 1024) -> None:
        if size < 0:
            raise ValueError("size must be >= 0")
        self.embedder = embedder
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], FloatMatrix] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return the texts' vectors (shape (len(texts), dimension)), from the cache when one text is known."""
        if len(texts) != 1 or self.size == 0:
            return self.embedder.embed(texts)
        key = (self.embedder.model_id, texts[0])
        with self._lock:
            known = self._vectors.get(key)
            if known is not None:
                self._vectors.move_to_end(key)
                return known
        vectors = self.embedder.embed(texts)
        vectors.setflags(write=False)
        with self._lock:
            self._vectors[key] = vectors
            if len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return vectors
