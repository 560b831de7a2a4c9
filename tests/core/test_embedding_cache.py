"""The cache of recent query vectors: a hit answers exactly what the model answered, by model and text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.core.embedding_cache import QueryVectorCache


class Drifting:
    """A model whose answers change with every call (what a stale cache entry would show)."""

    def __init__(self, model_id: str = "drifting", start: float = 0.0) -> None:
        self.model_id = model_id
        self.dimension = 4
        self._answer = start

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        self._answer += 1
        return np.full((len(texts), 4), self._answer, dtype=np.float32)


def test_a_cached_query_vector_is_the_models_own_answer() -> None:
    model = HashingEmbedder(64)
    cache = QueryVectorCache(model, size=8)
    first = cache.embed(["which language for billing?"])
    again = cache.embed(["which language for billing?"])
    assert np.array_equal(first, model.embed(["which language for billing?"]))
    assert np.array_equal(again, first) and again.shape == (1, 64)
    assert not np.array_equal(cache.embed(["which language for the API?"]), first)  # another text, another vector
    with pytest.raises(ValueError):
        again[0, 0] = 1.0  # read-only: nobody downstream can change what the next hit returns


def test_hits_are_by_text_and_the_oldest_is_dropped_past_size() -> None:
    cache = QueryVectorCache(Drifting(), size=2)
    a, b = cache.embed(["a"])[0, 0], cache.embed(["b"])[0, 0]
    assert (a, b) == (1.0, 2.0)
    assert cache.embed(["a"])[0, 0] == 1.0  # kept: the model's first answer, not a new one
    cache.embed(["c"])  # three texts in a cache of two: "b" (least recently used) goes
    assert cache.embed(["a"])[0, 0] == 1.0
    assert cache.embed(["b"])[0, 0] == 4.0  # embedded again


def test_the_model_is_part_of_the_key_and_batches_pass_through() -> None:
    cache = QueryVectorCache(Drifting("model-1"), size=4)
    assert cache.embed(["a"])[0, 0] == 1.0
    cache.embedder = Drifting("model-2", start=100.0)  # the same text under another model
    assert cache.embed(["a"])[0, 0] == 101.0
    assert cache.embed(["a"])[0, 0] == 101.0
    assert [cache.embed(["a", "b"])[0, 0] for _ in range(2)] == [102.0, 103.0]  # batches (the worker's): never cached


def test_size_zero_turns_it_off() -> None:
    cache = QueryVectorCache(Drifting(), size=0)
    assert [cache.embed(["a"])[0, 0] for _ in range(2)] == [1.0, 2.0]
    assert cache.model_id == "drifting" and cache.dimension == 4
