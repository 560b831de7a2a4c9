"""A recall's relevance floor reads each memory's lexical evidence from what the store keeps of its
indexed body, not by stemming the body again: long memories of made-up words that start like the
question's stems made one recall take seconds (bench/RESULTS.md). Both backends; on PostgreSQL the
scope is small, so its evidence comes from each row's tsvector rather than from a copy."""

from __future__ import annotations

import random
import string

from engramdb.config import Settings
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.relevance import QueryWords
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.lexical import porter
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import Store
from tests.factories import fact_body, scope_fields

SCOPE = scope_fields()
QUESTION = "what is the payments module coverage"
FACTS, WORDS = 30, 300


def _made_up(rng: random.Random) -> str:
    """Words that each start like one of the question's stems, and are each new."""
    return " ".join(
        rng.choice(("payme", "modul", "cover")) + "".join(rng.choices(string.ascii_lowercase, k=6))
        for _ in range(WORDS)
    )


def _stemmed(service: MemoryService, caller: Caller, **options: object) -> tuple[int, int]:
    """How many words one recall stemmed anew, and how many memories it returned."""
    porter.stem.cache_clear()
    body = RecallRequest.model_validate({"query": QUESTION, "scope": SCOPE, "limit": 3, **options})
    found = service.reads.recall(caller, body).memories
    return porter.stem.cache_info().misses, len(found)


def test_the_floor_stems_no_memory_again(store: Store, settings: Settings, operator: Caller) -> None:
    service = MemoryService(store, HashingEmbedder(), settings)
    rng = random.Random(5)
    texts = [_made_up(rng) for _ in range(FACTS)]
    for i, text in enumerate(texts):
        service.writes.write_fact(operator, FactWrite.model_validate(fact_body(text, subject=f"s.{i}", scope=SCOPE)))
    drain(store.tenant("t1"), service.shared.embedder)
    _stemmed(service, operator)  # the first read of the scope builds its copy (SQLite), stemming each word once
    plain, returned = _stemmed(service, operator)
    floored, kept = _stemmed(service, operator, minScore=0.0)
    assert returned == kept == 3
    assert floored - plain < WORDS  # the floor weighed all 30 memories and stemmed less than one of them
    # Positive control: reading the same evidence from the texts stems every word of every memory.
    porter.stem.cache_clear()
    words = QueryWords.of(["payments", "module", "coverage"], FACTS, {})
    assert all(words.evidence(text) == 0.0 for text in texts)
    assert porter.stem.cache_info().misses >= FACTS * WORDS * 0.9
