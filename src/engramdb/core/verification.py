"""``engram audit verify``: the chain, its anchors outside the database, then the rows it covers.

In that order, stopping at the first fault: a row can only be held to an audit entry that is
itself held (the chain links it, an anchor holds the chain). What weakens a verdict without
failing it (no anchor file, a torn anchor line) is a warning in it.
"""

from __future__ import annotations

from engramdb import clock
from engramdb.core import audit
from engramdb.core.anchor import Anchors
from engramdb.core.coverage import check_rows
from engramdb.models.admin import AuditVerdict
from engramdb.storage.port import TenantStore


def verify_tenant(name: str, tenant: TenantStore, anchors: Anchors) -> AuditVerdict:
    """Verify one tenant; anchor the head it verified when everything held."""
    chain = audit.verify(tenant)
    seen_at = clock.now_text()  # when the head was seen: what its anchor will say
    answer = AuditVerdict(
        tenant=name, verified=chain.ok, checked=chain.checked, broken_seq=chain.broken_seq, problem=chain.problem
    )
    if not chain.ok:
        return answer
    held = anchors.check(name, tenant)
    answer = answer.model_copy(update={"anchored": held.anchored, "warnings": list(held.warnings)})
    if held.problem is not None:
        return answer.model_copy(update={"verified": False, "broken_seq": held.broken_seq, "problem": held.problem})
    rows = check_rows(tenant, name)
    answer = answer.model_copy(update={"memories_checked": rows.memories, "rows_checked": rows.rows})
    if rows.fault is not None:
        fault = rows.fault
        memory_id = fault.row_id if fault.kind in ("EPISODE", "MEMORY_FACT") else None
        return answer.model_copy(
            update={
                "verified": False,
                "memory_id": memory_id,
                "row_kind": fault.kind,
                "row_id": fault.row_id,
                "fields": list(fault.fields),
                "problem": fault.problem,
            }
        )
    if chain.head_hash is not None:
        anchors.anchor(name, chain.checked, chain.head_hash, seen_at)  # what was verified is anchored
    return answer
