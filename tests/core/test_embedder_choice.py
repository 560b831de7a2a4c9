"""`ENGRAM_EMBEDDER=auto` (the default): a data folder keeps the local model its newest vectors
were made with; a new folder gets `minilm-fast` on a CPU with VNNI, else `minilm`. On both
backends, through the real store (the model ids are written as the embedding job writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedder_choice import cpu_has_vnni, new_folder_spec, resolve_spec
from engramdb.core.embedding import HashingEmbedder, make_embedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
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
    with_vnni, without, avx_vnni = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    with_vnni.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\nbugs\t\t: avx512_vnni\n")
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\nbugs\t\t: avx512_vnni_lookalike\n")
    avx_vnni.write_text("flags\t\t: fpu avx2 avx_vnni\n")
    assert cpu_has_vnni(with_vnni) and cpu_has_vnni(avx_vnni)
    assert not cpu_has_vnni(without)
    assert not cpu_has_vnni(tmp_path / "absent")  # not Linux: not assumed


def test_a_new_folder_gets_the_fast_model_exactly_on_a_cpu_with_vnni() -> None:
    expected = "minilm-fast" if cpu_has_vnni() else "minilm"
    assert new_folder_spec() == expected
