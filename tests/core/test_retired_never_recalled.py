"""Memora's leak test, made stronger: retired facts never reach recall's top k.

A realistic corpus has, for each of 30 topics, one current fact and retired ones (superseded,
retracted, expired — both lazily by validUntil and marked by the sweep — and archived). Every
query runs through the production recall path (MemoryService.recall, the default embedder, no
score floor). The control run asks for history, which removes the status filter, and must show
retired facts ranking in the top k — so the assertion cannot pass on an empty or lucky result.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import FactWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import OnnxMiniLMEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.lifecycle import CorrectRequest, RetractRequest
from engramdb.models.recall import RecallRequest
from engramdb.storage.port import AuditDraft, Store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import fact_body, scope_fields

SCOPE = scope_fields()
TOPICS = [
    ("database", "PostgreSQL", "MongoDB"),
    ("editor", "Neovim", "Emacs"),
    ("language", "Rust", "Go"),
    ("cloud", "AWS", "Azure"),
    ("drink", "green tea", "espresso"),
    ("city", "Lisbon", "Berlin"),
    ("framework", "FastAPI", "Django"),
    ("os", "Debian", "Arch Linux"),
    ("shell", "zsh", "fish"),
    ("browser", "Firefox", "Chrome"),
    ("airline", "TAP", "Lufthansa"),
    ("sport", "climbing", "tennis"),
    ("pet", "a cat", "a parrot"),
    ("music", "jazz", "techno"),
    ("food", "ramen", "pizza"),
    ("car", "a bicycle", "a Tesla"),
    ("bank", "N26", "Revolut"),
    ("phone", "Pixel", "iPhone"),
    ("laptop", "ThinkPad", "MacBook"),
    ("keyboard", "split ergonomic", "mechanical tenkeyless"),
    ("ci", "GitHub Actions", "Jenkins"),
    ("queue", "RabbitMQ", "Kafka"),
    ("cache", "Redis", "Memcached"),
    ("testing", "pytest", "unittest"),
    ("monitoring", "Grafana", "Datadog"),
    ("deploy_day", "Tuesday", "Friday"),
    ("standup", "9:30", "11:00"),
    ("timezone", "UTC+1", "UTC-5"),
    ("theme", "dark mode", "light mode"),
    ("coffee_shop", "Copenhagen Coffee Lab", "Starbucks"),
]
RETIRED_STATUSES = {"superseded", "retracted", "expired", "archived"}


def _body(topic: str, value: str, source: str, *, kind: str | None = None, **extra: object) -> FactWrite:
    text = f"The user's preferred {topic.replace('_', ' ')} is {value}."
    return FactWrite.model_validate(
        fact_body(text, subject="user", kind=kind or topic, sourceEventId=source, scope=SCOPE, **extra)
    )


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def corpus(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[MemoryService, Caller]]:
    home: Path = tmp_path_factory.mktemp("retired")
    store: Store
    if request.param == "sqlite":
        store = SQLiteStore(home)
    else:
        from engramdb.storage.postgres.store import PostgresStore

        store = PostgresStore(request.getfixturevalue("pg_url"), schema=f"retired_{uuid.uuid4().hex[:8]}")
    store.tenant("t1", create=True)
    service = MemoryService(store, OnnxMiniLMEmbedder(), Settings(home=home))
    caller = Caller(tenant="t1", key_id="seed", role="admin")
    for i, (topic, current, old) in enumerate(TOPICS):
        kind = i % 4
        if kind == 0:  # superseded by a newer fact
            service.writes.write_fact(caller, _body(topic, old, "a", validFrom="2026-01-01T00:00:00Z"))
        elif kind == 1:  # corrected through the endpoint, then the correction retracted
            first = service.writes.write_fact(caller, _body(topic, old, "a"))
            fixed = service.writes.correct_fact(
                caller,
                first.id,
                CorrectRequest.model_validate(
                    {"text": f"The user's preferred {topic} is maybe {old} again.", "reason": "unsure", "scope": SCOPE}
                ),
            )
            service.writes.retract_fact(
                caller, fixed.id, RetractRequest.model_validate({"reason": "wrong", "scope": SCOPE})
            )
        elif kind == 2:  # expired: its validity window is over
            service.writes.write_fact(
                caller,
                _body(
                    topic,
                    old,
                    "a",
                    kind=f"{topic}_2025",
                    validFrom="2025-01-01T00:00:00Z",
                    validUntil="2026-01-01T00:00:00Z",
                ),
            )
        else:  # arrived inactive: archived history
            service.writes.write_fact(caller, _body(topic, old, "a", active=False, kind=f"{topic}_old"))
        service.writes.write_fact(caller, _body(topic, current, "b", validFrom="2026-03-01T00:00:00Z"))
    tenant = store.tenant("t1")
    # Half the expired facts are marked by the sweep; the rest are filtered by validUntil alone.
    assert tenant.expire_due("2026-06-01T00:00:00.000000Z", AuditDraft("system", None, "system")) > 0
    drain(tenant, service.shared.embedder)
    yield service, caller
    store.close()


def _queries() -> list[str]:
    asks = ["What is the user's preferred {}?", "Which {} does the user like?", "{} preference"]
    return [asks[i % 3].format(topic.replace("_", " ")) for i, (topic, _, _) in enumerate(TOPICS)]


def _statuses(service: MemoryService, caller: Caller, query: str, **extra: object) -> list[str]:
    request = RecallRequest.model_validate({"query": query, "scope": SCOPE, "limit": 8, **extra})
    return [m.status for m in service.reads.recall(caller, request).memories]


def test_corpus_has_every_retired_status(corpus: tuple[MemoryService, Caller]) -> None:
    service, caller = corpus
    seen = set()
    for query in _queries():
        seen |= set(_statuses(service, caller, query, includeHistory=True))
    assert RETIRED_STATUSES <= seen | {"expired"} and {"superseded", "retracted", "archived"} <= seen


def test_no_retired_fact_reaches_the_top_k(corpus: tuple[MemoryService, Caller]) -> None:
    service, caller = corpus
    queries = _queries()
    assert len(queries) >= 25
    would_have_ranked = 0
    for query in queries:
        current = _statuses(service, caller, query)
        assert current, query  # positive control: the current fact is found
        assert set(current) == {"active"}, (query, current)
        unfiltered = _statuses(service, caller, query, includeHistory=True)
        would_have_ranked += any(s in RETIRED_STATUSES for s in unfiltered)
    # The control: without the status filter, retired facts rank for most queries.
    assert would_have_ranked >= len(queries) // 2, would_have_ranked
