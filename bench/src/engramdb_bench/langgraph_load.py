"""Items of the LangGraph store loaded in one transaction: the facts ``EngramStore.put`` writes, made
by the store's own mapping (``engramdb.integrations.langgraph_items``) and the write path's rows,
already embedded, through storage's ``bulk_load``. For a benchmark's (or a test's) thousands of
items at once; every item is new (a first version: nothing to supersede)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engramdb import clock
from engramdb.contract.canonical import sha256_hex
from engramdb.contract.events import Scope
from engramdb.contract.writes import FactWrite
from engramdb.core import auth
from engramdb.core.auth import Caller
from engramdb.core.embedding_port import Embedder
from engramdb.core.rows import fact_row
from engramdb.integrations import langgraph_items as items
from engramdb.storage.port import TenantStore

Put = tuple[tuple[str, ...], str, Mapping[str, Any]]  # namespace, key, value
_BATCH = 2_000


def load_items(tenant: TenantStore, embedder: Embedder, scope: Mapping[str, Any], puts: Sequence[Put]) -> int:
    """Write ``puts`` (new items) as one participant's facts in ``scope`` (five wire-named fields),
    in order (the last one newest); return how many were new."""
    caller = Caller("bench", "bench-loader", "admin")
    written = Scope.model_validate(dict(scope))
    loaded = 0
    for start in range(0, len(puts), _BATCH):
        rows, audits = [], []
        for namespace, key, value in puts[start : start + _BATCH]:
            body = {
                "text": items.text(key, value),
                "subjectKey": items.subject(namespace),
                "kind": items.kind(key),
                "sourceEventId": items.INDEXED,
                "provenance": items.provenance(None),
                **dict(scope),
            }
            row = fact_row(FactWrite.model_validate(body).to_event(written), written, clock.now_text())
            rows.append(row)
            audits.append(
                caller.audit(
                    "fact.write",
                    target_kind="MEMORY_FACT",
                    target_id=row.memory_id,
                    scope_key=auth.scope_key(written),
                    after_digest=sha256_hex(row.event_json),
                )
            )
        vectors = embedder.embed([row.embed_text for row in rows])
        loaded += tenant.bulk_load(rows, vectors, embedder.model_id, audits)
    return loaded
