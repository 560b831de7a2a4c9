"""SQLite scores a scope's record vectors a slice at a time (the whole scope at once took 121 MB a
search at 50,000 texts): the answer is the one a single pass gives, each record at its best text's
score, ordered by score then rowid, whatever the slices' size and wherever rows of another width fall."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.knowledge import RecordSearch, RecordWrite
from engramdb.storage.sqlite import knowledge_store
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import scope_fields

MINE = scope_fields()


def _one_pass(records: list[int], scores: list[float], limit: int) -> list[tuple[int, float]]:
    best: dict[int, float] = {}
    for record, score in zip(records, scores, strict=True):
        best[record] = max(score, best.get(record, -2.0))
    return sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]


@given(
    st.lists(st.tuples(st.integers(1, 30), st.sampled_from([-0.5, 0.0, 0.25, 0.5, 0.75, 1.0])), max_size=80),
    st.integers(1, 40),
)
def test_each_record_at_its_best_score_in_order(pairs: list[tuple[int, float]], limit: int) -> None:
    records = [r for r, _ in pairs]
    scores = np.asarray([s for _, s in pairs], dtype=np.float32)  # few values: many ties, broken by rowid
    found = knowledge_store._best_per_record(np.asarray(records, dtype=np.int64), scores, limit)
    assert found == _one_pass(records, [float(s) for s in scores], limit)


def _search(service: MemoryService, operator: Caller) -> list[tuple[str, float | None]]:
    body = RecordSearch.model_validate({"query": "the garden needs watering", "limit": 30, "scope": MINE})
    return [(r.id, r.score) for r in service.record_reads.search_records(operator, body).records]


@pytest.mark.parametrize("backend", ["sqlite"])  # PostgreSQL ranks inside the database
def test_slices_answer_as_one_pass_does(
    service: MemoryService, operator: Caller, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = [{"title": f"the garden plan {i}", "note": f"watering every {i} days, by hand"} for i in range(25)]
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": data, "scope": MINE})
    )
    drain(store.tenant("t1"), HashingEmbedder())
    whole = _search(service, operator)
    assert len(whole) == 25  # the control: every record is found, each once
    with sqlite3.connect(store.tenant("t1").path) as conn:  # rows of another width: a slice of only those
        conn.execute("UPDATE record_vectors SET embedding = x'00000000' WHERE rowid IN (1, 2, 3)")
    one_pass = _search(service, operator)
    assert one_pass != whole and len(one_pass) >= 23  # the short rows are passed by, not scored
    monkeypatch.setattr(knowledge_store, "_SLICE", 3)
    assert _search(service, operator) == one_pass
