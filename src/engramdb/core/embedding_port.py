"""The Embedder protocol core depends on, and the vector normalisation every embedder shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to L2-normalised float32 row vectors.

    Every failure to produce vectors raises ``engramdb.errors.EmbeddingFailedError``, whose
    ``retryable`` tells whether trying again later may succeed.
    """

    # Read-only properties so both plain attributes and lazily computed
    # properties satisfy the protocol under mypy.
    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return shape (len(texts), dimension), each row unit length or zero."""
        ...


def l2_normalize(matrix: npt.ArrayLike) -> FloatMatrix:
    """Row-wise L2 normalisation; all-zero rows stay zero instead of NaN."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    safe = np.where(norms > 0.0, norms, np.float32(1.0))
    return (rows / safe).astype(np.float32, copy=False)
