"""EngramDB in this process: the operations run on a data folder, with no server and no key.

What ``engramdb.Memory()`` uses when it is given no URL, as ``engram`` does on the data folder:
the caller is the machine's operator (an admin of the tenant), every change is audited, and what
is written is embedded before the call returns, so the next search ranks it by meaning too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engramdb.config import Settings
from engramdb.core.auth import Caller
from engramdb.core.embedder_choice import embedder_for
from engramdb.core.operations import run
from engramdb.core.service import MemoryService
from engramdb.jobs.embedding import drain
from engramdb.models.inputs import Inputs
from engramdb.models.operation import Operation
from engramdb.storage.registry import open_store

_WRITES = ("write_episode", "write_episode_batch", "write_fact", "correct_fact", "edit_and_approve", "add")


class Embedded:
    """The operations on a data folder (``home``, default ``ENGRAM_HOME`` or ./.engram), as its operator."""

    def __init__(self, home: str | Path | None = None, *, tenant: str = "default", settings: Settings | None = None):
        self.settings = settings or (Settings(home=Path(home)) if home is not None else Settings())
        self.tenant = tenant
        store = open_store(self.settings.storage_url(), **self.settings.store_options())
        embedder = embedder_for(self.settings, store)
        self.service = MemoryService(store, embedder, self.settings)
        store.tenant(tenant, create=True)
        self._caller = Caller(tenant, "embedded", "admin", operator=True)

    def call(self, op: Operation[Any], inputs: Inputs) -> Any:
        """Run ``op`` as the operator; after a write, embed what it wrote."""
        answer: BaseModel | None = run(self.service, op, None if op.public else self._caller, inputs)
        if op.name in _WRITES:
            drain(self.service.shared.store.tenant(self.tenant), self.service.shared.embedder)
        return answer

    def close(self) -> None:
        self.service.shared.store.close()
