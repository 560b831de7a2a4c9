"""A deletion rebuilds only its own scope's in-memory copy.

The erasure count was the tenant's: any key's deletion of one memory made every scope's copy be built
anew on its next read, so another key's recall of a 94,000-memory scope took 1.7 s instead of 38 ms
after each unrelated delete (a review helper's script, session 45), repeatable at will by any key.
"""

from __future__ import annotations

from typing import Any

from engramdb.contract.events import Scope
from engramdb.contract.writes import EpisodeWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.erasure import DeleteMemoryQuery
from engramdb.models.recall import RecallRequest
from engramdb.storage.scope_cache import ScopeCache
from engramdb.storage.sqlite.store import SQLiteStore
from tests.factories import episode_body, participant, scope_fields

ALICE, BOB = scope_fields(), scope_fields(participantScopeHash=participant("bob"))


def _copy(cache: ScopeCache, path: Any, fields: dict[str, Any]) -> object:
    return cache._scopes[f"{path}:{auth.scope_key(Scope.model_validate(fields))}"]


def test_a_delete_in_one_scope_leaves_the_others_copies_as_they_are(settings: Any) -> None:
    store = SQLiteStore(settings.home)
    service = MemoryService(store, HashingEmbedder(), settings)
    callers = {}
    for name, fields in (("alice", ALICE), ("bob", BOB)):
        callers[name] = Caller(tenant="t1", key_id=f"k-{name}", role="agent", grant=fields)
    store.tenant("t1", create=True)
    ids: dict[str, list[str]] = {"alice": [], "bob": []}
    for name, fields in (("alice", ALICE), ("bob", BOB)):
        for turn in range(3):
            body = episode_body(f"{name} grows tomatoes, turn {turn}", turn=turn, scope=fields)
            ids[name].append(service.writes.write_episode(callers[name], EpisodeWrite.model_validate(body)).id)
    tenant = store.tenant("t1")

    def recalled(name: str) -> set[str]:
        answer = service.reads.recall(callers[name], RecallRequest(query="tomatoes"))
        return {m.id for m in answer.memories}

    try:
        assert recalled("alice") == set(ids["alice"])
        before = _copy(tenant._copies, tenant.path, ALICE)
        service.erasure.delete_episode(callers["bob"], ids["bob"][0], DeleteMemoryQuery())  # another scope's deletion
        assert recalled("alice") == set(ids["alice"])
        assert _copy(tenant._copies, tenant.path, ALICE) is before  # alice's copy was not built again
        service.erasure.delete_episode(callers["alice"], ids["alice"][0], DeleteMemoryQuery())  # the control: her own
        assert recalled("alice") == set(ids["alice"][1:])  # the deleted one is gone from her recall
        assert _copy(tenant._copies, tenant.path, ALICE) is not before
        assert recalled("bob") == set(ids["bob"][1:])
    finally:
        store.close()
