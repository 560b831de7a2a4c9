"""all-MiniLM-L6-v2 with int8 activations as well as int8 weights, derived from the shipped model.

The shipped model stores its weights as int8 but turns them back into float32 (a Cast and a Mul)
before every MatMul; onnxruntime folds that into float32 weights when it loads the model, so each
query reads ~42 MB of them and its weight MatMuls take ~3 of its ~5 ms here (bench/RESULTS.md).
Quantising the activations on the fly too (onnxruntime's dynamic quantisation, one scale per
output channel of each weight) runs those MatMuls on int8: a query's embedding in the server
takes a little over half the time, at the cost of slightly different vectors (cosine >= 0.989 to
the float ones on 300 LoCoMo questions; LoCoMo recall@10 0.732 against 0.729), measured on a CPU
with AVX-512 VNNI and again on one with AVX2 alone (cosine >= 0.988, the same recall@10; quantising
to 7 bits against AVX2's saturating products changed nothing).

Derived from the verified model file at load time, offline, in a child process (a few seconds):
the quantiser holds the float model several times over while it works, and a server would keep
that peak. The result is kept in the user's cache folder (``$XDG_CACHE_HOME/engramdb``, by default
``~/.cache/engramdb``), named by what it was made from and checked by its own digest (against a
torn write; whoever can write that folder can change it, as they can the installed packages), so
the next process (a CLI command, the extraction worker) reads it instead of deriving it again.
It needs the ``onnx`` package, which the quantiser reads models with (a dependency of engramdb).

    python -m engramdb.core.embedding_int8 SOURCE.onnx TARGET.onnx
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from engramdb.errors import EmbeddingFailedError

_NO_ONNX = 3  # the child's exit status when the quantiser (onnx) cannot be imported
NEEDS_ONNX = "the minilm-fast embedder needs the 'onnx' package (a dependency of engramdb): pip install onnx"
_DERIVE_TIMEOUT_SECONDS = 300


def derive_int8_activations(model_path: Path) -> bytes:
    """Return the model at ``model_path`` with its weight MatMuls on int8 activations (ONNX bytes):
    the cached copy when there is a sound one, else a new derivation (then cached)."""
    cached = cache_folder() / f"minilm-int8-{_recipe(model_path)}.onnx"
    known = _read_sound(cached)
    if known is not None:
        return known
    derived = _derive_in_child(model_path)
    _keep(cached, derived)
    return derived


def cache_folder() -> Path:
    """Where derived models are kept (the XDG cache convention)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "engramdb"


def _recipe(model_path: Path) -> str:
    """What a derivation depends on: the source's bytes and the quantiser's versions."""
    from importlib.metadata import PackageNotFoundError, version

    digest = hashlib.sha256(model_path.read_bytes())
    for package in ("onnxruntime", "onnx"):
        try:
            digest.update(f"|{package} {version(package)}".encode())
        except PackageNotFoundError:
            digest.update(f"|{package} absent".encode())
    return digest.hexdigest()[:16]


def _read_sound(path: Path) -> bytes | None:
    """The cached model if it is there and matches the digest written beside it."""
    try:
        data, expected = path.read_bytes(), path.with_suffix(".sha256").read_text().strip()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == expected else None


def _keep(path: Path, data: bytes) -> None:
    """Cache ``data`` at ``path`` (digest first, model last, each by rename); a cache that cannot
    be written only costs the next process a derivation."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for target, content in ((path.with_suffix(".sha256"), hashlib.sha256(data).hexdigest().encode()), (path, data)):
            partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
            partial.write_bytes(content)
            partial.replace(target)
    except OSError:
        logging.getLogger(__name__).warning("the derived int8 model could not be cached in %s", path.parent)


def _derive_in_child(model_path: Path) -> bytes:
    try:
        with tempfile.TemporaryDirectory(prefix="engram-minilm-") as folder:
            target = Path(folder) / "int8.onnx"
            # -P: the working directory is not put first on the child's path, so a folder named
            # like a package there (an `engramdb` plugin folder, say) cannot stand in for it.
            command = [sys.executable, "-P", "-m", __name__, str(model_path), str(target)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=_DERIVE_TIMEOUT_SECONDS, check=False)
            if done.returncode == _NO_ONNX:
                raise EmbeddingFailedError(f"{NEEDS_ONNX} ({_last_line(done.stderr)})", retryable=False)
            if done.returncode != 0 or not target.is_file():
                raise EmbeddingFailedError(
                    f"the int8 MiniLM model could not be derived (exit status {done.returncode}: "
                    f"{_last_line(done.stderr)})",
                    retryable=False,
                )
            return target.read_bytes()
    except subprocess.TimeoutExpired as error:
        raise EmbeddingFailedError(
            f"deriving the int8 MiniLM model took over {_DERIVE_TIMEOUT_SECONDS} s", retryable=False
        ) from error
    except OSError as error:  # no temporary folder, no interpreter to run, an unreadable result
        raise EmbeddingFailedError(f"the int8 MiniLM model could not be derived: {error}", retryable=False) from error


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or ["no output"])[-1]


def _derive(source: Path, target: Path) -> int:
    try:
        import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information
        from onnxruntime.quantization import (  # type: ignore[import-untyped]  # untyped as well
            QuantType,
            quantize_dynamic,
        )
    except ImportError as error:  # onnx missing, or a version the quantiser cannot use
        print(f"ImportError: {error}", file=sys.stderr)
        return _NO_ONNX
    # The quantiser advises "pre-processing" on the root logger for every model: advice for models
    # exported from training, not for this one.
    logging.getLogger().setLevel(logging.ERROR)
    folded = target.with_suffix(".folded.onnx")
    options = ort.SessionOptions()
    # The basic, hardware-independent rewrites (constant folding turns the int8 -> float32 weights
    # into plain initializers the quantiser reads); higher levels save hardware-specific nodes.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    options.log_severity_level = 3
    ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
    quantize_dynamic(folded, target, weight_type=QuantType.QInt8, per_channel=True)
    folded.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(_derive(Path(sys.argv[1]), Path(sys.argv[2])))
