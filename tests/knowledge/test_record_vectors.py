"""A record's text changed while the worker embedded its old text, on both backends: the old
text's vector must not be stored as the new text's. It was (stored by row id alone, marked ready),
so the record was found by meaning for what it no longer said, and never embedded again."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.embedding_port import FloatMatrix
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain, embed_record_batch
from engramdb.models.knowledge import RecordChange, RecordSearch, RecordWrite
from tests.factories import scope_fields

MINE = scope_fields()
OLD = "The invoice service is written in Go"
NEW = "The garden needs watering every Tuesday"


class _EditingEmbedder(HashingEmbedder):
    """The real hashing embedder, which runs ``meanwhile`` once, as a request would arrive while it works."""

    def __init__(self, meanwhile: Callable[[], None]) -> None:
        super().__init__()
        self._meanwhile: Callable[[], None] | None = meanwhile

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        vectors = super().embed(texts)
        if self._meanwhile is not None:
            run, self._meanwhile = self._meanwhile, None
            run()
        return vectors


def _score(service: MemoryService, caller: Caller, query: str) -> float:
    found = service.record_reads.search_records(caller, RecordSearch.model_validate({"query": query, "scope": MINE}))
    assert len(found.records) == 1
    score = found.records[0].score
    assert score is not None
    return score


def test_a_text_changed_while_embedding_is_embedded_again(service: MemoryService, operator: Caller) -> None:
    written = service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": {"title": OLD}, "scope": MINE})
    )
    record = written.records[0].id

    def edit() -> None:
        change = RecordChange.model_validate({"properties": {"title": NEW}, "scope": MINE})
        service.record_writes.update_record(operator, record, change)

    tenant = service.shared.store.tenant("t1")
    assert embed_record_batch(tenant, _EditingEmbedder(edit), 64) == 1  # embedded OLD; NEW written meanwhile
    drain(tenant, HashingEmbedder())
    assert _score(service, operator, NEW) > 0.99  # NEW's own vector
    assert _score(service, operator, OLD) < 0.5


def test_an_unchanged_text_is_embedded_once(service: MemoryService, operator: Caller) -> None:
    """The positive control: without an edit, the first batch stores the vector and nothing is due after."""
    service.record_writes.write_records(
        operator, RecordWrite.model_validate({"label": "NOTE", "data": {"title": OLD}, "scope": MINE})
    )
    tenant = service.shared.store.tenant("t1")
    assert embed_record_batch(tenant, HashingEmbedder(), 64) == 1
    assert embed_record_batch(tenant, HashingEmbedder(), 64) == 0
    assert _score(service, operator, OLD) > 0.99
