"""Changing the embedder (hashing -> MiniLM) on both backends: the old vectors are stale (shown as
such, left out of the vector arm, still found by words), the health check counts them, and
`engram reembed` (resumable) makes them findable by meaning again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite, FactWrite
from engramdb.core.admin import stale_backlog
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder, OnnxMiniLMEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain, reembed
from engramdb.models.knowledge import RecordSearch, RecordWrite
from engramdb.models.memories import MemoryQuery
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.cli import engram
from tests.factories import episode_body, fact_body, scope_fields
from tests.sqlite_steps import vm_steps
from tests.stores import store_spec

SCOPE = scope_fields()
DOG = "My canine companion is called Biscuit"
OTHERS = (
    "The quarterly budget report is due on Friday",
    "Paris is the capital of France",
    "The staging server runs PostgreSQL 16",
    "We moved the standup to ten o'clock",
)


@pytest.fixture(scope="module")
def minilm() -> Iterator[OnnxMiniLMEmbedder]:
    yield OnnxMiniLMEmbedder(threads=2, batch_size=4)


def _recall(service: MemoryService, caller: Caller, query: str, limit: int = 5) -> list[Any]:
    body = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": limit, "expand": 0})
    return service.reads.recall(caller, body).memories


def test_old_vectors_are_stale_found_by_words_then_reembedded_and_found_by_meaning(
    store: Store, settings: Settings, operator: Caller, minilm: OnnxMiniLMEmbedder
) -> None:
    before = MemoryService(store, HashingEmbedder(), settings)
    dog = before.writes.write_fact(
        operator, FactWrite.model_validate(fact_body(DOG, kind="note", scope=SCOPE))
    ).memory.id
    for turn, text in enumerate(OTHERS):
        before.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(text, turn=turn, scope=SCOPE)))
    tenant = store.tenant("t1")
    drain(tenant, before.shared.embedder)
    assert before.reads.get_fact(operator, dog, MemoryQuery.model_validate(SCOPE)).embedding.state == "ready"

    after = MemoryService(store, minilm, settings)  # the server restarted with another embedder
    view = after.reads.get_fact(operator, dog, MemoryQuery.model_validate(SCOPE)).embedding
    assert (view.state, view.model) == ("stale", before.shared.embedder.model_id)
    assert after.admin.health().reembed_backlog == 5
    by_words = _recall(after, operator, "Biscuit")
    assert [(m.id, m.embedding_state) for m in by_words] == [(dog, "stale")], "found by words, marked stale"
    by_meaning = _recall(after, operator, "which pet do I own")
    assert by_meaning == [], "no vector of another model is ever ranked against this one's"

    stopped = []

    def stop_after_one_batch(count: int) -> None:
        stopped.append(count)
        raise KeyboardInterrupt  # the operator pressed ^C

    with pytest.raises(KeyboardInterrupt):
        reembed(tenant, minilm, batch_size=2, progress=stop_after_one_batch)
    assert tenant.aging.stale_count(minilm.model_id) == 3, "the first batch was kept"
    assert reembed(tenant, minilm, batch_size=2) == 3, "a second run resumes with what is left"
    assert tenant.aging.stale_count(minilm.model_id) == 0

    found = _recall(after, operator, "which pet do I own", limit=1)
    assert [(m.id, m.embedding_state) for m in found] == [(dog, "ready")], "found by meaning again"
    view = after.reads.get_fact(operator, dog, MemoryQuery.model_validate(SCOPE)).embedding
    assert (view.state, view.model) == ("ready", minilm.model_id)


def test_engram_reembed_shows_progress_and_empties_the_backlog(
    store: Store, settings: Settings, operator: Caller
) -> None:
    hashing = MemoryService(store, HashingEmbedder(), settings)
    for turn, text in enumerate(OTHERS):
        hashing.writes.write_episode(operator, EpisodeWrite.model_validate(episode_body(text, turn=turn, scope=SCOPE)))
    drain(store.tenant("t1"), hashing.shared.embedder)
    spec = store_spec(store)
    env = {**os.environ, "ENGRAM_EMBEDDER": "minilm", "COLUMNS": "120"}
    if spec[0] == "sqlite":
        env["ENGRAM_HOME"] = spec[1]
    else:
        env.update(ENGRAM_DATABASE_URL=spec[1], ENGRAM_PG_SCHEMA=spec[2])
    ran = engram("reembed", env=env)
    assert ran.returncode == 0, ran.stderr
    assert (
        "4/4" in ran.stdout and "re-embedded 4 memories and 0 record texts with all-MiniLM-L6-v2-int8" in ran.stdout
    ), ran.stdout
    assert store.tenant("t1").aging.stale_count("all-MiniLM-L6-v2-int8") == 0
    assert store.tenant("t1").aging.stale_count(hashing.shared.embedder.model_id) == 4  # positive control: they moved


def test_record_vectors_are_stale_too_and_reembedded(
    store: Store, settings: Settings, operator: Caller, minilm: OnnxMiniLMEmbedder
) -> None:
    # Issue 30: after an embedder switch, `engram reembed` left record vectors on the old model and a
    # semantic record search silently found nothing.
    before = MemoryService(store, HashingEmbedder(), settings)
    notes = [{"title": DOG}, *({"title": text} for text in OTHERS)]
    before.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": notes, "scope": SCOPE})
    )
    tenant = store.tenant("t1")
    drain(tenant, before.shared.embedder)

    def titles(service: MemoryService) -> list[str]:
        search = RecordSearch.model_validate({"query": "which pet do I own", "limit": 1, "scope": SCOPE})
        return [r.properties["title"] for r in service.record_reads.search_records(operator, search).records]

    assert len(titles(before)) == 1  # positive control: the old model's vectors answer the old model
    after = MemoryService(store, minilm, settings)
    assert titles(after) == [], "no record vector of another model is ranked against this one's"
    assert after.admin.health().reembed_backlog == 5, "the record texts are counted as stale"
    assert reembed(tenant, minilm, batch_size=2) == 5
    assert stale_backlog(tenant, minilm.model_id) == 0  # (health counts at most every 30 s)
    assert titles(after) == [DOG], "found by meaning with the new model"


def test_the_backlog_is_counted_from_the_index_of_vectors_by_model(settings: Settings) -> None:
    """/healthz (no key needed) counted every ready vector for it: 2 s with 1,000,000 memories (a review
    helper's script). Counted here: the statements' SQLite steps with few and with many current vectors;
    the old statement (``<>``) is the positive control that the count sees them."""

    from engramdb.storage.sqlite.store import SQLiteStore

    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    operator = Caller(tenant="t1", key_id="op", role="admin")
    store.tenant("t1", create=True)
    aging = store.tenant("t1").aging
    model = service.shared.embedder.model_id
    seen: list[tuple[str, Any]] = []
    real = aging._run

    def cost() -> tuple[int, int]:
        seen.clear()
        aging._run = lambda sql, params: seen.append((sql, params)) or real(sql, params)  # type: ignore[func-returns-value]
        try:
            assert aging.stale_count(model) == 0 and aging.stale_count("another-model") > 0  # the counts hold
        finally:
            aging._run = real
        old = "SELECT count(*) FROM memories WHERE embed_state = 'ready' AND (embed_model IS NULL OR embed_model <> ?)"
        return vm_steps(store.tenant("t1").path, seen[:1]), vm_steps(store.tenant("t1").path, [(old, [model])])

    def write(turns: range) -> None:
        for turn in turns:
            body = episode_body(f"turn {turn}", turn=turn, scope=scope_fields())
            service.writes.write_episode(operator, EpisodeWrite.model_validate(body))
        drain(store.tenant("t1"), service.shared.embedder)

    try:
        write(range(1))
        before, old_before = cost()
        write(range(1, 301))
        after, old_after = cost()
    finally:
        store.close()
    assert old_after > old_before + 300  # the positive control: the old statement reads every vector
    assert after == before  # this model's 300 new vectors are not read
