"""A recall runs its lexical arm beside the query's embedding where the store reads the arms apart
(core/beside.py): it answers what the one-thread path answers, on both backends."""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from engramdb.config import Settings
from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.beside import model_runs
from engramdb.core.embedding import FloatMatrix, HashingEmbedder
from engramdb.core.recall import recall
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.storage.port import Candidate, CandidateFilter
from tests.factories import episode_body, scope_fields
from tests.storage.conftest import OpenStore

WORDS = "kafka deploy garden tomatoes lisbon flight dentist budget sister piano migration friday".split()
# Recency reads the clock, which moves between two recalls; the anchor holds "friday" still.
RETRIEVAL = Settings().retrieval.model_copy(update={"recency_weight": 0.0})
ANCHOR = dt.datetime(2026, 12, 6, 12, tzinfo=dt.UTC)
QUERIES = [
    "when is the dentist",
    "kafka deploy on friday",
    "what did my sister say about the piano",
    "budget for the lisbon flight",
    "tomatoes in the garden",
    "migration",
    "nothing of these words",
]


class _ModelLike(HashingEmbedder):
    """Hashing vectors, embedded as a model is: ``model_runs()``, then (when ``waits``) the run
    lasts until a helper has begun the work beside it, so the test never depends on timing."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = False
        self.helper_began = threading.Event()

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        model_runs()
        if self.waits:
            assert self.helper_began.wait(30)
            self.helper_began.clear()
        return super().embed(texts)


def test_the_lexical_arm_beside_the_embedding_answers_as_one_thread_does(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(copy_min_rows=1)  # PostgreSQL: every scope from its copy, whose arms read apart
    scope = scope_fields()
    key = auth.scope_key(Scope.model_validate(scope))
    embedder = _ModelLike()
    store.tenant("t1", create=True)
    service = MemoryService(store, embedder, Settings(embedder="hashing"))
    rng = random.Random(5)
    bodies = [
        episode_body(" ".join(rng.sample(WORDS, 4)), "", session=f"s{i // 8}", turn=i, scope=scope) for i in range(80)
    ]
    service.writes.write_episodes(Caller("t1", "test", "admin"), [EpisodeWrite.model_validate(b) for b in bodies])
    tenant = store.tenant("t1")
    drain(tenant, embedder)

    threads: list[str] = []
    text_candidates = tenant.text_candidates

    def lexical_arm(*args: Any) -> list[Candidate]:
        if embedder.waits:  # a recall beside the embedding (the other path may read it too)
            threads.append(threading.current_thread().name)
            embedder.helper_began.set()
        return text_candidates(*args)

    monkeypatch.setattr(tenant, "text_candidates", lexical_arm)  # a spy: the store's own arm answers

    def ranked(query: str, beside: bool) -> list[tuple[int, float, dict[str, dict[str, float]], dict[str, float]]]:
        embedder.waits = beside
        with tenant.reading() as reading:
            found = recall(
                reading,
                embedder,
                scope_key=key,
                query=query,
                filt=CandidateFilter(),
                limit=100,  # every candidate: each arm row counts
                settings=RETRIEVAL,
                anchor=ANCHOR,
                vector=None if beside else embedder.embed([query])[0],  # a vector given: one thread
            )
        return [(h.record.rowid, h.score, h.arms, h.features) for h in found.hits]

    ranked(QUERIES[0], beside=False)  # PostgreSQL learns the scope's size from its first search
    assert tenant.lexical_apart(key)  # so the recalls below without a vector take the path beside
    both_arms = 0
    for query in QUERIES:
        alone = ranked(query, beside=False)
        assert ranked(query, beside=True) == alone, query
        both_arms += sum(1 for _, _, arms, _ in alone if {"dense", "lexical"} <= arms.keys())
    assert both_arms > 0  # control: the lexical arm's rows are among what is compared
    assert len(threads) == len(QUERIES) and all(t.startswith("engram-recall-beside") for t in threads)
