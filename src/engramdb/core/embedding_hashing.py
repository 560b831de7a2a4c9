"""A deterministic feature-hashing embedder: no model, stable everywhere; for tests and minimal installs."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from engramdb.core.embedding_port import FloatMatrix, l2_normalize

_WORD_RE = re.compile(r"\w+")


def _hashed_features(text: str) -> list[str]:
    """Word tokens plus boundary-marked character trigrams of each token."""
    features: list[str] = []
    for token in _WORD_RE.findall(text.lower()):
        features.append("w:" + token)
        # Boundary markers let short words and prefixes/suffixes contribute.
        marked = f"<{token}>"
        features.extend("t:" + marked[i : i + 3] for i in range(len(marked) - 2))
    return features


class HashingEmbedder:
    """Deterministic bag-of-features embedder: no model, stable everywhere.

    blake2b (not Python's salted ``hash()``) keeps vectors identical across
    processes and machines.
    """

    def __init__(self, dimension: int = 256) -> None:
        if dimension < 1:
            raise ValueError("dimension must be >= 1")
        self.dimension = dimension
        self.model_id = f"hashing-{dimension}"

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in _hashed_features(text):
                bucket, sign = self._bucket(feature)
                out[row, bucket] += sign
        return l2_normalize(out)

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        # Low bit picks the sign so collisions cancel on average.
        return (value >> 1) % self.dimension, (1.0 if value & 1 else -1.0)
