"""What every area of the service shares: the store, the embedder, the settings, and the helpers
that turn a caller into its tenant store and a request into its scope."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from engramdb import clock
from engramdb.config import Settings
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.aging.usage import UsageBuffer
from engramdb.core.anchor import Anchors
from engramdb.core.auth import Caller
from engramdb.core.embedding import Embedder
from engramdb.core.embedding_cache import QueryVectorCache
from engramdb.core.foreground import Foreground
from engramdb.core.sealed import Sealer
from engramdb.errors import InvalidInputError
from engramdb.models.aging import JobView
from engramdb.storage.port import AuditDraft, Store, TenantStore


class JobBoard(Protocol):
    """What the service shows of the server's background jobs (jobs/supervisor.py has them)."""

    def views(self) -> list[JobView]: ...


class Shared:
    """The state behind the operations, one per service; every area holds it."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.queries = QueryVectorCache(embedder, settings.query_cache_size)  # recall's query vectors
        self.settings = settings
        self.written = threading.Event()  # wakes the embedding worker
        self._salts: dict[str, str] = {}  # tenant -> its participant salt
        self._sealers: dict[str, Sealer] = {}  # tenant -> its cursors' sealer (keyed by that salt)
        self.anchors = Anchors(*settings.anchor_paths())  # the audit chain's heads, outside the database
        self.usage = UsageBuffer()  # recall's hits, written in batches by the usage job
        self.supervisor: JobBoard | None = None  # set by the server that runs the jobs
        self.now = clock.utc_now  # when aging's marks (use, restore) happen; tests move it
        self.queued = threading.Event()  # wakes the extraction workers (a model job was queued)
        self.foreground = Foreground()  # recalls in flight (file-backed where a worker process reads it)

    def tenant(self, caller: Caller) -> TenantStore:
        return self.store.tenant(caller.tenant)

    def scope(self, caller: Caller, named: Mapping[str, Any]) -> Scope:
        """Return a request's full scope (``auth.resolve_scope``), a ``userId`` first turned into its
        participantScopeHash with the tenant's secret salt."""
        return auth.resolve_scope(caller, self.hashed(caller, named))

    def hashed(self, caller: Caller, named: Mapping[str, Any]) -> dict[str, Any]:
        """Return the scope fields a request names, its ``userId`` (if any) as a participantScopeHash."""
        fields = dict(named)
        user_id = fields.pop("userId", None)
        if user_id is not None:
            if "participantScopeHash" in fields:
                raise InvalidInputError(
                    "name the participant once: userId or participantScopeHash, not both", field="userId"
                )
            fields["participantScopeHash"] = self.participant_hash(caller, user_id)
        return fields

    def participant_hash(self, caller: Caller, user_id: str) -> str:
        """Return ``hash_scope([userId], salt)`` with the caller's tenant's secret salt.

        The raw id is hashed here and goes no further: it is not stored, logged or answered.
        """
        return hash_scope([user_id], self._salt(caller))

    def sealer(self, caller: Caller) -> Sealer:
        """The row numbers' sealer of the caller's tenant (core/sealed.py), keyed by its secret salt."""
        sealer = self._sealers.get(caller.tenant)
        if sealer is None:
            sealer = self._sealers[caller.tenant] = Sealer(self._salt(caller))
        return sealer

    def _salt(self, caller: Caller) -> str:
        """The tenant's secret salt, made (and audited as the caller's) the first time it is asked for."""
        salt = self._salts.get(caller.tenant)
        if salt is None:  # a salt never changes once made: one read per tenant and process
            draft = AuditDraft(
                action="tenant.participant_salt",
                actor_key_id=None if caller.operator else caller.key_id,
                actor_role="operator" if caller.operator else caller.role,
                target_kind="tenant",
                target_id=caller.tenant,
            )
            salt = self._salts[caller.tenant] = self.tenant(caller).participant_salt(draft)
        return salt


class Area:
    """One area of the service's operations (writes, reads, review, ...), over the shared state."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
