"""A memory deleted while the embedding worker embeds it: its vector goes to no other memory.

SQLite gives a new row the largest rowid again once the row that held it is deleted, so a vector
saved by rowid alone landed on the next memory written, marked ready with another text's meaning
(found by a review helper: the erased text then recalled that memory). The worker saves a vector
only where the row's text is still the text embedded (storage/port.py). On both backends; the race
is made certain by deleting and writing while the model embeds."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from engramdb import clock
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import embed_batch
from engramdb.models.erasure import DeleteMemoryQuery
from engramdb.storage.port import Store
from tests.factories import episode_body, scope_fields


class EmbedderThatWaits(HashingEmbedder):
    """The model, with something done once while it embeds (as another request would, meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.meanwhile: Callable[[], None] | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
        return super().embed(texts)


def _write(service: MemoryService, caller: Caller, text: str) -> str:
    return service.writes.write_episode(
        caller, EpisodeWrite.model_validate(episode_body(text, scope=scope_fields()))
    ).id


def test_a_vector_of_a_deleted_memory_goes_to_no_later_memory(
    store: Store, service: MemoryService, operator: Caller
) -> None:
    embedder = EmbedderThatWaits()
    tenant = store.tenant("t1")
    _write(service, operator, "The staging database is in Frankfurt")  # embedded as usual: the control
    assert embed_batch(tenant, embedder, 64) == 1
    erased = _write(service, operator, "My bank PIN is 4096")
    later: list[str] = []

    def erase_and_write() -> None:
        service.erasure.delete_episode(operator, erased, DeleteMemoryQuery.model_validate(scope_fields()))
        later.append(_write(service, operator, "The cat is called Miso"))

    embedder.meanwhile = erase_and_write
    embed_batch(tenant, embedder, 64)  # embeds the PIN; its row is gone, and another may hold its rowid
    [(miso, _)] = tenant.memories_by_id(later[0])
    assert miso.embed_state == "pending"  # not given the erased text's vector
    [job] = tenant.embedding_jobs(64, clock.now_text())
    assert (job.rowid, job.text.splitlines()[0]) == (
        miso.rowid,
        "The cat is called Miso",
    )  # still due, for its own text
    assert embed_batch(tenant, embedder, 64) == 1
    assert tenant.memories_by_id(later[0])[0][0].embed_state == "ready"
    assert tenant.embedding_counts() == {"pending": 0, "ready": 2, "failed": 0}
