"""`minilm-fast`: the shipped MiniLM on int8 activations, derived at load (core/embedding_int8.py).

Its speed is measured in bench/RESULTS.md, never asserted here; these tests pin what it is: the
same model's meaning (close to the float vectors, same neighbours), yet a different computation
with its own model id, so stored vectors of one are never compared with the other's.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from onnxruntime.capi.onnxruntime_pybind11_state import Fail  # type: ignore[import-untyped]  # no types

from engramdb.core import embedding_int8, embedding_onnx
from engramdb.core.embedding import Embedder, OnnxMiniLMEmbedder, is_local_spec, make_embedder
from engramdb.errors import EmbeddingFailedError

TEXTS = [
    "The cat sits on the mat",
    "A cat is sitting on a mat",
    "Quarterly tax filing deadlines",
    "Caroline went to the LGBTQ support group on 7 May 2023",
    "What did Melanie paint recently?",
    "I finished a painting of a sunset over the lake last week",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def _own_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Derived models go to this module's cache folder, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))


@pytest.fixture(scope="module")
def both() -> tuple[OnnxMiniLMEmbedder, OnnxMiniLMEmbedder]:
    return OnnxMiniLMEmbedder(threads=1), OnnxMiniLMEmbedder(threads=1, activations="int8")


def test_the_factory_builds_it_with_its_own_model_id() -> None:
    fast = make_embedder("minilm-fast")
    assert isinstance(fast, OnnxMiniLMEmbedder) and isinstance(fast, Embedder)
    assert fast.model_id == "all-MiniLM-L6-v2-int8-dynamic"
    assert make_embedder("minilm").model_id == "all-MiniLM-L6-v2-int8"  # the default is untouched
    assert is_local_spec("minilm-fast") and is_local_spec("minilm") and not is_local_spec("openai:x|y")


def test_its_vectors_mean_what_the_float_ones_mean(both: tuple[OnnxMiniLMEmbedder, OnnxMiniLMEmbedder]) -> None:
    exact, fast = (embedder.embed(TEXTS) for embedder in both)
    assert fast.shape == exact.shape == (len(TEXTS), 384) and fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    # Another computation (activations rounded to int8), not the same vectors under a new name...
    assert not np.array_equal(fast, exact)
    # ...yet each text lands where the float model puts it, and the nearest neighbours agree.
    assert float((fast * exact).sum(axis=1).min()) >= 0.98
    for vectors in (exact, fast):
        similar = vectors @ vectors.T
        np.fill_diagonal(similar, -1)
        assert similar[0].argmax() == 1 and similar[4].argmax() == 5  # the paraphrase; the painting
        assert similar[0, 1] > similar[0, 2] + 0.3


def test_a_text_gets_the_same_vector_in_a_batch_and_alone(
    both: tuple[OnnxMiniLMEmbedder, OnnxMiniLMEmbedder],
) -> None:
    """Int8 activations are scaled by each run's largest value, so batched texts would move each
    other's vectors (cosine 0.991 to the text alone): a query and the worker's batch holding the
    same text must agree exactly, as they do with float activations."""
    exact, fast = both
    batch = fast.embed(TEXTS)
    np.testing.assert_array_equal(batch, np.vstack([fast.embed([text]) for text in TEXTS]))
    # The float model, whose batches are padded and masked, as the yardstick (to float rounding).
    np.testing.assert_allclose(exact.embed(TEXTS), np.vstack([exact.embed([t]) for t in TEXTS]), atol=1e-6)


class _CountingRuns:
    """A loaded session standing in for itself, counting the runs in flight; with ``meet`` the
    first run waits (at most 30 s) for a second to start, so two runs at once are seen whenever
    the embedder allows them."""

    def __init__(self, session: Any, meet: bool, fail_at: int = 0) -> None:
        self.session, self.meet, self.fail_at = session, meet, fail_at
        self.lock, self.second = threading.Lock(), threading.Event()
        self.active = self.peak = self.runs = 0

    def run(self, *args: Any) -> Any:
        with self.lock:
            self.active += 1
            self.runs += 1
            self.peak = max(self.peak, self.active)
            if self.active > 1:
                self.second.set()
            run = self.runs
        try:
            if self.meet and run == 1:
                self.second.wait(30)
            if run == self.fail_at:
                raise Fail("this run fails")  # onnxruntime's own error type
            return self.session.run(*args)
        finally:
            with self.lock:
                self.active -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_batchs_texts_run_on_its_threads_at_once_and_no_more(threads: int) -> None:
    """The int8 model runs each text alone on one thread, and ``threads`` texts at once: a batch's
    texts are dealt out to that many threads (the worker's batches embed about twice as fast on two
    cores). The vectors are the texts' own, whichever thread ran them."""
    fast = make_embedder("minilm-fast", threads=threads)
    assert isinstance(fast, OnnxMiniLMEmbedder)
    alone = np.vstack([fast.embed([text]) for text in TEXTS])  # loads it, one run at a time
    counting = _CountingRuns(fast._session, meet=threads > 1)
    fast._session = cast(Any, counting)
    np.testing.assert_array_equal(fast.embed(TEXTS), alone)
    assert counting.runs == len(TEXTS)
    assert (2 <= counting.peak <= threads) if threads > 1 else counting.peak == 1


def test_callers_at_once_share_the_threads_runs_and_no_more() -> None:
    """Several threads embedding batches at once (the worker, recalls, a re-embed): at most ``threads``
    runs are in flight together, whoever asked, and each caller gets its own texts' vectors."""
    fast = make_embedder("minilm-fast", threads=2)
    assert isinstance(fast, OnnxMiniLMEmbedder)
    alone = np.vstack([fast.embed([text]) for text in TEXTS])
    counting = _CountingRuns(fast._session, meet=False)
    fast._session = cast(Any, counting)
    start = threading.Barrier(5)

    def embed_all(_: int) -> Any:
        start.wait(30)
        return fast.embed(TEXTS)

    with ThreadPoolExecutor(5) as callers:
        answers = list(callers.map(embed_all, range(5)))
    for answer in answers:
        np.testing.assert_array_equal(answer, alone)
    assert counting.runs == 5 * len(TEXTS) and counting.peak <= 2


def test_a_failed_run_stops_the_batch_and_nothing_runs_on_after_it() -> None:
    """A run that fails (the machine's state) fails the call; the other thread's share stops at its
    next text, and no run of that call is still going once it has raised."""
    fast = make_embedder("minilm-fast", threads=2)
    assert isinstance(fast, OnnxMiniLMEmbedder)
    fast.embed(["load"])
    counting = _CountingRuns(fast._session, meet=False, fail_at=2)
    fast._session = cast(Any, counting)
    with pytest.raises(EmbeddingFailedError, match="failed to run"):
        fast.embed(TEXTS * 4)
    assert counting.active == 0 and counting.runs < len(TEXTS) * 4
    counting.fail_at = 0  # positive control: the same embedder and session embed the whole batch
    assert fast.embed(TEXTS * 4).shape == (len(TEXTS) * 4, 384)


def test_without_onnx_it_fails_for_good_and_says_which_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert OnnxMiniLMEmbedder(activations="int8").embed(["hi"]).shape == (1, 384)  # positive control
    # The model is derived in a child process: an `onnx` first on its path that cannot be imported,
    # and an empty cache, so there is nothing derived earlier to read instead.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    (tmp_path / "onnx").mkdir()
    (tmp_path / "onnx" / "__init__.py").write_text("raise ImportError('onnx is not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    with pytest.raises(EmbeddingFailedError, match=r"pip install onnx") as info:
        OnnxMiniLMEmbedder(activations="int8").embed(["hi"])
    assert (info.value.http_status, info.value.retryable) == (502, False)
    assert OnnxMiniLMEmbedder().embed(["hi"]).shape == (1, 384)  # the default needs no onnx


def test_the_factory_refuses_it_at_once_without_onnx(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server configured for it must not start and then fail every recall: `make_embedder`
    (which `engram serve` calls before it listens) says which package is missing."""
    assert make_embedder("minilm-fast").model_id.endswith("-dynamic")  # positive control: onnx installed
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a))
    with pytest.raises(EmbeddingFailedError, match=r"pip install onnx") as info:
        make_embedder("minilm-fast")
    assert info.value.retryable is False
    assert make_embedder("minilm").model_id == "all-MiniLM-L6-v2-int8"


def test_a_load_that_cannot_succeed_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each recall would otherwise hash the model file again under the load lock, one at a time."""
    import engramdb.core.embedding_onnx as onnx_module

    calls: list[str] = []

    def missing() -> Path:
        calls.append("verify")
        raise EmbeddingFailedError("gone", retryable=False)

    monkeypatch.setattr(onnx_module, "_verified_model_path", missing)
    embedder = OnnxMiniLMEmbedder()
    for _ in range(3):
        with pytest.raises(EmbeddingFailedError, match="gone"):
            embedder.embed(["hi"])
    assert calls == ["verify"]
    monkeypatch.undo()  # a new instance (a restart) tries again, and loads
    assert OnnxMiniLMEmbedder().embed(["hi"]).shape == (1, 384)


def test_the_derived_model_is_cached_and_a_torn_copy_is_derived_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = embedding_int8.cache_folder()  # under tmp_path: the derivations below start from nothing
    assert not source.exists()
    children: list[list[str]] = []
    real_run = subprocess.run

    def counted(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
        children.append(command)
        return real_run(command, **options)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "run", counted)  # the module object embedding_int8 calls too
    model = embedding_onnx._verified_model_path()
    first = embedding_int8.derive_int8_activations(model)
    cached = list(source.glob("minilm-int8-*.onnx"))
    assert len(children) == 1 and len(cached) == 1 and cached[0].read_bytes() == first
    assert embedding_int8.derive_int8_activations(model) == first and len(children) == 1  # read, not derived
    cached[0].write_bytes(first[: len(first) // 2])  # a torn write
    assert embedding_int8.derive_int8_activations(model) == first and len(children) == 2  # derived again
    assert cached[0].read_bytes() == first


def test_an_unknown_activation_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="activations"):
        OnnxMiniLMEmbedder(activations=cast(Any, "int4"))  # not an Activations, as an untyped caller may pass
