"""`ENGRAM_EMBEDDER=auto` (the default): a data folder keeps the local model its newest vectors
were made with (any tenant's, memories or record texts; `minilm` first); a new folder gets
`minilm-fast` on an x86 CPU with AVX2 or VNNI, else `minilm`. On both backends, through the real store (the
model ids are written as the embedding jobs write them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import embedder_choice
from engramdb.core.auth import Caller
from engramdb.core.embedder_choice import cpu_has_int8_kernels, new_folder_spec, resolve_spec
from engramdb.core.embedding import HashingEmbedder, make_embedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import RecordWrite
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields

FLOAT, INT8 = "all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2-int8-dynamic"


def _write(store: Store, settings: Settings, operator: Caller, text: str, model: str) -> None:
    """One episode, embedded (hashing vectors) and then recorded as ``model``'s, as a server on
    that model would have left it."""
    service = MemoryService(store, HashingEmbedder(), settings)
    service.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(text, scope=scope_fields())))
    tenant = store.tenant(operator.tenant)
    drain(tenant, service.shared.embedder)
    rowid = tenant.aging.stale_vectors("no model", after_rowid=0, limit=100)[-1][0]  # the newest
    tenant.save_embeddings([rowid], HashingEmbedder().embed([text]), model)


def test_a_folder_keeps_the_model_of_its_newest_vectors(store: Store, settings: Settings, operator: Caller) -> None:
    assert resolve_spec("auto", store) == new_folder_spec()  # a tenant, no vector yet
    _write(store, settings, operator, "The staging database is in Frankfurt", FLOAT)
    assert resolve_spec("auto", store) == "minilm"
    _write(store, settings, operator, "Lunch on Fridays is pizza", INT8)  # re-embedded, or switched
    assert resolve_spec("auto", store) == "minilm-fast"
    _write(store, settings, operator, "Ana plays the cello", FLOAT)
    assert resolve_spec("auto", store) == "minilm"


def test_vectors_of_no_local_model_leave_the_new_folder_default(
    store: Store, settings: Settings, operator: Caller
) -> None:
    _write(store, settings, operator, "The staging database is in Frankfurt", "hashing-384")
    assert resolve_spec("auto", store) == new_folder_spec()
    _write(store, settings, operator, "Lunch on Fridays is pizza", FLOAT)  # positive control
    assert resolve_spec("auto", store) == "minilm"


def test_every_tenant_counts_and_one_on_minilm_keeps_the_folder_there(
    store: Store, settings: Settings, operator: Caller
) -> None:
    other = Caller(tenant="zeta", key_id="test-operator", role="admin")
    store.tenant("zeta", create=True)
    _write(store, settings, operator, "The staging database is in Frankfurt", "hashing-384")  # tenant t1
    _write(store, settings, other, "Lunch on Fridays is pizza", FLOAT)
    assert resolve_spec("auto", store) == "minilm"  # t1 has no local model's vector: zeta is asked too
    _write(store, settings, operator, "Ana plays the cello", INT8)
    assert resolve_spec("auto", store) == "minilm"  # one tenant on the packaged model keeps the folder on it
    _write(store, settings, other, "The release train leaves on Tuesdays", INT8)
    assert resolve_spec("auto", store) == "minilm-fast"  # positive control: both tenants switched


def test_record_vectors_alone_keep_the_folder(store: Store, settings: Settings, operator: Caller) -> None:
    service = MemoryService(store, HashingEmbedder(), settings)
    body = {"label": "NOTE", "data": [{"title": "The staging database is in Frankfurt"}], "scope": scope_fields()}
    service.record_writes.write_records(operator, RecordWrite.model_validate(body))
    tenant = store.tenant(operator.tenant)
    drain(tenant, service.shared.embedder)
    assert resolve_spec("auto", store) == new_folder_spec()  # hashing vectors only: no local model yet
    [(record_id, text)] = tenant.aging.stale_record_vectors("no model", after_rowid=0, limit=10)
    tenant.save_record_embeddings([record_id], [text], HashingEmbedder().embed([text]), FLOAT)
    assert resolve_spec("auto", store) == "minilm"


def test_a_named_embedder_is_never_replaced(store: Store, settings: Settings, operator: Caller) -> None:
    _write(store, settings, operator, "The staging database is in Frankfurt", FLOAT)
    for spec in ("hashing", "minilm-fast", "openai:http://127.0.0.1:9|m"):
        assert resolve_spec(spec, store) == spec
    assert resolve_spec(" auto ", store) == "minilm"  # positive control: auto is resolved
    assert resolve_spec("auto", None) == new_folder_spec()


def test_auto_is_refused_where_no_store_can_resolve_it() -> None:
    with pytest.raises(ValueError, match="'auto' is resolved against a store"):
        make_embedder("auto")
    assert make_embedder("hashing").model_id.startswith("hashing")  # positive control


def test_the_cpu_check_reads_the_flags_line(tmp_path: Path) -> None:
    with_vnni, avx2, avx_vnni, older = (tmp_path / name for name in "abcd")
    with_vnni.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_vnni\nbugs\t\t: avx2\n")
    avx2.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")  # AMD EPYC without VNNI, measured
    avx_vnni.write_text("flags\t\t: fpu avx_vnni\n")
    older.write_text("processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx\nbugs\t\t: avx2 avx512_vnni\n")  # not flags
    assert cpu_has_int8_kernels(with_vnni) and cpu_has_int8_kernels(avx2) and cpu_has_int8_kernels(avx_vnni)
    assert not cpu_has_int8_kernels(older)
    assert not cpu_has_int8_kernels(tmp_path / "absent")  # not Linux: not assumed


@pytest.mark.parametrize(
    ("int8", "onnx", "expected"),
    [(True, True, "minilm-fast"), (True, False, "minilm"), (False, True, "minilm"), (False, False, "minilm")],
)
def test_a_new_folder_gets_the_fast_model_only_with_int8_kernels_and_its_quantiser(
    int8: bool, onnx: bool, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedder_choice, "cpu_has_int8_kernels", lambda: int8)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *rest: None if name == "onnx" and not onnx else real(name, *rest)
    )
    assert new_folder_spec() == expected


def test_onnx_is_installed_and_this_cpu_is_read() -> None:
    """The dependency is there (no extra needed), and this machine's own flags decide (machines of this
    kind have had AVX-512 VNNI, or AVX2 alone: both give `minilm-fast`)."""
    from importlib.util import find_spec

    assert find_spec("onnx") is not None
    assert new_folder_spec() == ("minilm-fast" if cpu_has_int8_kernels() else "minilm")
