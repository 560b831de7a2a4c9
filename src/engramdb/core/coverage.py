"""Do the stored rows say what the audit says they were left as? Part of ``engram audit verify``.

Every row that decides what a read returns or who may read it is held to the last audit entry
that changed it (one that recorded a digest of its state, engramdb/audit_chain/states.py, or one
that removed it): memories (status, trust class, origin, retirement, marks, content, scope),
records (properties, label, origin, scope), relationships, API keys (role, grant, secret,
revocation), and the tenant's policy and participant salt.

- No such entry: no operation of the server wrote it (a forged fact, an inserted admin key).
- The last one removed it: it was put back.
- Its digest differs: it was edited; the field classes whose fingerprints differ are named.

A memory's or a record's scope columns must digest to the scope key it is found by. A
DERIVED_FROM link that its fact's and episode's events make needs no entry of its own (the write
that stored the later of the two made it). Rows are read in pages and the entries about each
page found by index, so memory stays flat however many rows a tenant holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from engramdb.audit_chain.states import (
    Classes,
    changed_classes,
    digest,
    key_classes,
    memory_classes,
    record_classes,
    value_digest,
)
from engramdb.contract.events import Scope
from engramdb.core import auth
from engramdb.core.integrity import event_problem
from engramdb.storage.knowledge.port import RecordRow
from engramdb.storage.port import AuditEntry, CoverageReads, MemoryRecord, ScopeColumns, TenantStore
from engramdb.storage.rows import EdgeRow

REMOVING = frozenset({"record.delete", "relationship.delete", "memory.delete", "memory.retention"})
PAGE = 1_000
T = TypeVar("T")
Key = tuple[str | None, str]  # (scope key, target id): what an entry names a row by


@dataclass(frozen=True)
class RowFault:
    """The first row that is not what the audit says: its kind, its id, what is wrong, and which
    of its field classes differ."""

    kind: str
    row_id: str
    problem: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class RowsChecked:
    """How many memories and rows (memories included) were held to the audit, and the first fault."""

    memories: int
    rows: int
    fault: RowFault | None = None


def check_rows(tenant: TenantStore, name: str) -> RowsChecked:
    """Hold every covered row of the tenant ``name`` to its audit entries; stop at the first fault."""
    reads, scopes = tenant.coverage, _Scopes()
    memories, fault = _walk(reads, reads.memory_page, lambda row: row[0].rowid, partial(_memory_page, reads, scopes))
    rows = memories
    checks: list[Callable[[], tuple[int, RowFault | None]]] = [
        partial(_walk, reads, reads.record_page, lambda row: row[0].rowid, partial(_record_page, reads, scopes)),
        partial(_walk, reads, reads.relationship_page, lambda edge: edge.rowid, partial(_relationship_page, reads)),
        partial(_keys, reads),
        partial(_settings, reads, name),
    ]
    for check in checks:
        if fault is not None:
            break
        checked, fault = check()
        rows += checked
    return RowsChecked(memories, rows, fault)


PageCheck = Callable[[list[T], int], tuple[int, RowFault | None]]


def _walk(
    reads: CoverageReads, read: Callable[[int, int], list[T]], rowid: Callable[[T], int], check: PageCheck[T]
) -> tuple[int, RowFault | None]:
    """Check every page of rows, each against the head of the log read just before it."""
    checked, after = 0, 0
    while True:
        head = reads.head_seq()
        page = read(after, PAGE)
        if not page:
            return checked, None
        counted, fault = check(page, head)
        checked += counted
        if fault is not None:
            return checked, fault
        after = rowid(page[-1])


def _memory_page(
    reads: CoverageReads, scopes: _Scopes, page: list[tuple[MemoryRecord, ScopeColumns]], head: int
) -> tuple[int, RowFault | None]:
    changes: dict[str, dict[Key, list[AuditEntry]]] = {}
    for source in {m.source for m, _ in page}:
        changes[source] = _changes(reads, source, [(m.scope_key, m.memory_id) for m, _ in page if m.source == source])
    for checked, (memory, scope) in enumerate(page):
        problem = event_problem(memory)
        if problem is not None:
            return checked, RowFault(memory.source, memory.memory_id, problem, ("content",))
        fault = scopes.fault(memory.source, memory.memory_id, scope) or _held(
            memory.source,
            memory.memory_id,
            memory_classes(memory),
            changes[memory.source].get((memory.scope_key, memory.memory_id), []),
            head,
        )
        if fault is not None:
            return checked, fault
    return len(page), None


def _record_page(
    reads: CoverageReads, scopes: _Scopes, page: list[tuple[RecordRow, ScopeColumns]], head: int
) -> tuple[int, RowFault | None]:
    changes = _changes(reads, "RECORD", [(r.scope_key, r.record_id) for r, _ in page])
    for checked, (record, scope) in enumerate(page):
        about = changes.get((record.scope_key, record.record_id), [])
        fault = scopes.fault("RECORD", record.record_id, scope) or _held(
            "RECORD", record.record_id, record_classes(record), about, head
        )
        if fault is not None:
            return checked, fault
    return len(page), None


def _relationship_page(reads: CoverageReads, page: list[EdgeRow], head: int) -> tuple[int, RowFault | None]:
    changes = _changes(reads, "RELATIONSHIP", [(e.scope_key, e.target_id) for e in page])
    for checked, edge in enumerate(page):
        if not edge.ends_held:
            problem = "one of its ends is gone or in another scope (changed behind the server's back)"
            return checked, RowFault("RELATIONSHIP", edge.target_id, problem, ("ends",))
        about = changes.get((edge.scope_key, edge.target_id), [])
        fault = _held("RELATIONSHIP", edge.target_id, edge.state, about, head, implied=edge.implied)
        if fault is not None:
            return checked, fault
    return len(page), None


def _keys(reads: CoverageReads) -> tuple[int, RowFault | None]:
    head = reads.head_seq()
    keys = reads.keys()
    changes = _changes(reads, "api_key", [(None, k.key_id) for k in keys])
    for checked, key in enumerate(keys):
        fault = _held("api_key", key.key_id, key_classes(key), changes.get((None, key.key_id), []), head)
        if fault is not None:
            return checked, fault
    return len(keys), None


def _settings(reads: CoverageReads, tenant: str) -> tuple[int, RowFault | None]:
    """The tenant's policy (found by kind: its entries name no target) and its participant salt."""
    checked = 0
    for key, kind, about, row_id in (
        ("policy", "policy", None, "policy"),
        ("participant_salt", "tenant", [tenant], "participant salt"),
    ):
        head = reads.head_seq()
        value = reads.setting(key)
        changes = [e for e in reads.entries_about(kind, about) if e.after_digest is not None]
        if value is None:
            if any(e.seq <= head for e in changes):  # set before the read: it should be there
                problem = f"the {row_id} audit entry {changes[-1].seq} ({changes[-1].action}) set is gone"
                return checked, RowFault(kind, row_id, f"{problem} (deleted behind the server's back)", ("value",))
            continue
        if not _accounted(value_digest(value), changes, head):
            said = f"it is not what audit entry {changes[-1].seq} recorded" if changes else "no audit entry set it"
            return checked, RowFault(kind, row_id, f"{said} (written behind the server's back)", ("value",))
        checked += 1
    return checked, None


def _held(
    kind: str, row_id: str, state: Classes, changes: list[AuditEntry], head: int, *, implied: bool = False
) -> RowFault | None:
    """The fault of a row whose state is ``state`` and whose changing entries are ``changes``."""
    if not changes:
        if implied:
            return None
        return RowFault(kind, row_id, "no audit entry wrote it (it was stored behind the server's back)")
    if _accounted(digest(state), changes, head):
        return None
    entry = changes[-1]
    if entry.after_digest is None:
        problem = f"audit entry {entry.seq} ({entry.action}) removed it, yet it is stored (put back behind its back)"
        return RowFault(kind, row_id, problem)
    fields = tuple(changed_classes(entry.after_digest, state))
    what = f"its {', '.join(fields)} {'is' if len(fields) == 1 else 'are'}" if fields else "its state is"
    problem = f"{what} not what audit entry {entry.seq} ({entry.action}) recorded (edited behind the server's back)"
    return RowFault(kind, row_id, problem, fields)


def _accounted(state_digest: str, changes: list[AuditEntry], head: int) -> bool:
    """Whether a row read with this digest is what its changes (in order) left it as: the last
    one's state, or an earlier one's when every later change is past ``head`` (committed after the
    row was read, so the row need not show it yet)."""
    for entry in reversed(changes):
        if entry.after_digest == state_digest:
            return True
        if entry.seq <= head:
            return False
    return False


def _changes(reads: CoverageReads, kind: str, keys: Sequence[Key]) -> dict[Key, list[AuditEntry]]:
    """The entries that changed each of these rows (recorded a digest, or removed it), in order."""
    found: dict[Key, list[AuditEntry]] = {}
    for entry in reads.entries_about(kind, [target_id for _, target_id in keys]):
        if entry.target_id is not None and (
            entry.after_digest is not None or entry.before_digest is not None or entry.action in REMOVING
        ):
            found.setdefault((entry.scope_key, entry.target_id), []).append(entry)
    return found


class _Scopes:
    """Whether stored scope columns digest to the row's scope key (computed once per scope)."""

    def __init__(self) -> None:
        self._keys: dict[tuple[str, str, str, str, bool], str] = {}

    def fault(self, kind: str, row_id: str, scope: ScopeColumns) -> RowFault | None:
        fields = (scope.agent_id, scope.profile_id, scope.privacy_scope, scope.participant_scope_hash)
        named = (*fields, scope.sandbox_eligible)
        if named not in self._keys:
            if len(self._keys) >= 100_000:
                self._keys.clear()
            self._keys[named] = _scope_key(*fields, scope.sandbox_eligible)
        if self._keys[named] == scope.scope_key:
            return None
        problem = "its scope fields do not digest to the scope key it is found by (moved behind the server's back)"
        return RowFault(kind, row_id, problem, ("scope",))


def _scope_key(agent: str, profile: str, privacy: str, participant: str, sandbox: bool) -> str:
    fields = {
        "agentId": agent,
        "profileId": profile,
        "privacyScope": privacy,
        "participantScopeHash": participant,
        "sandboxEligible": sandbox,
    }
    try:
        return auth.scope_key(Scope.model_validate(fields))
    except ValueError:  # no scope the server could have stored
        return ""
