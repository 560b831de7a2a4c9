"""Which embedder runs when none is named (``ENGRAM_EMBEDDER=auto``, the default).

A data folder keeps the local model its vectors were made with: switching models makes every stored
vector stale (found by words only until ``engram reembed``), so that stays an explicit act. Every
tenant is asked for the model of its newest local vector, of memories and of record texts; one
``minilm`` among them keeps the folder on ``minilm`` (the default before ``auto``), else one
``minilm-fast`` keeps it there. A folder with no local vector yet gets ``minilm-fast`` where its
int8 kernels were measured to pay (bench/RESULTS.md): an x86 CPU with VNNI (the model alone embeds
a question in ~1.5 ms instead of ~5) or with AVX2 alone (~3.1 ms instead of ~4.6, on one thread
instead of two, and ~3.8 instead of ~7.7 after 200 ms of quiet; its vectors as close to the float
model's as with VNNI). LoCoMo and BEAM recall were not lower on either; on AVX2 the LongMemEval
sample's turn recall@10 rose and its @5 fell by one question (rank 5 to 7). Elsewhere (another
architecture, an older x86) it gets ``minilm``: nobody here has measured the int8 kernels there.
Each process decides when it starts: processes on other machines that share one PostgreSQL schema
before its first vector should name the model.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from engramdb.config import Settings
from engramdb.core.embedding import Embedder, make_embedder
from engramdb.storage.port import Store

AUTO = "auto"
# The local models a folder can be keeping, by the model id stored beside each vector.
_SPEC_OF_MODEL = {"all-MiniLM-L6-v2-int8": "minilm", "all-MiniLM-L6-v2-int8-dynamic": "minilm-fast"}
# The CPU flags (Linux) of the int8 instructions onnxruntime's kernels were measured with here.
_INT8_FLAGS = ("avx512_vnni", "avx_vnni", "avx2")


def embedder_for(settings: Settings, store: Store, *, threads: int = 2) -> Embedder:
    """The settings' embedder, ``auto`` resolved against ``store``."""
    return make_embedder(resolve_spec(settings.embedder, store), api_key=settings.embedder_api_key, threads=threads)


def resolve_spec(spec: str, store: Store | None) -> str:
    """``spec`` itself, unless it is ``auto``: then the local model the store's newest vectors
    were made with, or for a store with none (or no store) :func:`new_folder_spec`."""
    if spec.strip() != AUTO:
        return spec
    kept = _kept_models(store) if store is not None else set()
    for local in ("minilm", "minilm-fast"):  # the packaged model first: it was the default
        if local in kept:
            return local
    return new_folder_spec()


def new_folder_spec() -> str:
    """``minilm-fast`` on a CPU with measured int8 kernels when its quantiser (onnx) is installed, else
    ``minilm``."""
    fast = importlib.util.find_spec("onnx") is not None and cpu_has_int8_kernels()
    return "minilm-fast" if fast else "minilm"


def cpu_has_int8_kernels(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU's flags (Linux) name int8 instructions onnxruntime's kernels were measured with
    here (VNNI's dot products, or AVX2's multiply-adds)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:  # not Linux: not measured, so not assumed
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return any(flag in flags for flag in _INT8_FLAGS)


def _kept_models(store: Store) -> set[str]:
    """The local models (as specs) that made each tenant's newest local vectors."""
    kept: set[str] = set()
    for name in store.tenant_names():
        aging = store.tenant(name).aging
        with aging.maintenance():  # a tenant with no local vector is read whole: longer than a request may take
            kept.update(_SPEC_OF_MODEL[model] for model in aging.newest_vector_models(list(_SPEC_OF_MODEL)))
    return kept
