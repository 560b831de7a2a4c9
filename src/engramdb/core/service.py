"""``MemoryService``: every operation of EngramDB, independent of the surface that calls it.

One short method per operation (``engramdb.models.operations`` names them), grouped by what
they act on: writes, reads, review, administration. Talks to the storage port and the embedder,
never to a driver.
"""

from __future__ import annotations

from engramdb.core.admin import AdminOperations
from engramdb.core.aging_ops import AgingOperations
from engramdb.core.deriving import DerivingOperations
from engramdb.core.erasure import ErasureOperations
from engramdb.core.knowledge.deleting import KnowledgeDeleting
from engramdb.core.knowledge.reading import KnowledgeReading
from engramdb.core.knowledge.writing import KnowledgeWriting
from engramdb.core.reads import ReadOperations, TimeTravel, as_believed, lifecycle_filter
from engramdb.core.review import ReviewOperations
from engramdb.core.rows import episode_row, fact_row
from engramdb.core.scopes import ScopeOperations
from engramdb.core.writes import MAX_BATCH, WriteOperations

__all__ = ["MAX_BATCH", "MemoryService", "TimeTravel", "as_believed", "episode_row", "fact_row", "lifecycle_filter"]


class MemoryService(
    WriteOperations,
    ReadOperations,
    ReviewOperations,
    AdminOperations,
    ScopeOperations,
    KnowledgeWriting,
    KnowledgeReading,
    KnowledgeDeleting,
    ErasureOperations,
    AgingOperations,
    DerivingOperations,
):
    """The operations of EngramDB over one store and one embedder."""
