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

from collections.abc import Callable, Iterator, Sequence
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
from engramdb.storage.port import AuditEntry, CoverageReads, ScopeColumns, TenantStore

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
    memories, fault = _memories(reads, scopes)
    rows = memories
    checks: list[Callable[[], tuple[int, RowFault | None]]] = [
        partial(_records, reads, scopes),
        partial(_relationships, reads),
        partial(_keys, reads),
        partial(_settings, reads, name),
    ]
    for check in checks:
        if fault is not None:
            break
        checked, fault = check()
        rows += checked
    return RowsChecked(memories, rows, fault)


def _memories(reads: CoverageReads, scopes: _Scopes) -> tuple[int, RowFault | None]:
    checked = 0
    for page in _pages(reads.memory_page, lambda row: row[0].rowid):
        last: dict[str, dict[Key, AuditEntry]] = {}
        for source in {m.source for m, _ in page}:
            last[source] = _last(reads, source, [(m.scope_key, m.memory_id) for m, _ in page if m.source == source])
        for memory, scope in page:
            problem = event_problem(memory)
            if problem is not None:
                return checked, RowFault(memory.source, memory.memory_id, problem, ("content",))
            fault = scopes.fault(memory.source, memory.memory_id, scope) or _held(
                memory.source,
                memory.memory_id,
                memory_classes(memory),
                last[memory.source].get((memory.scope_key, memory.memory_id)),
            )
            if fault is not None:
                return checked, fault
            checked += 1
    return checked, None


def _records(reads: CoverageReads, scopes: _Scopes) -> tuple[int, RowFault | None]:
    checked = 0
    for page in _pages(reads.record_page, lambda row: row[0].rowid):
        last = _last(reads, "RECORD", [(r.scope_key, r.record_id) for r, _ in page])
        for record, scope in page:
            key = (record.scope_key, record.record_id)
            fault = scopes.fault("RECORD", record.record_id, scope) or _held(
                "RECORD", record.record_id, record_classes(record), last.get(key)
            )
            if fault is not None:
                return checked, fault
            checked += 1
    return checked, None


def _relationships(reads: CoverageReads) -> tuple[int, RowFault | None]:
    checked = 0
    for page in _pages(reads.relationship_page, lambda edge: edge.rowid):
        last = _last(reads, "RELATIONSHIP", [(e.scope_key, e.target_id) for e in page])
        for edge in page:
            if (
                edge.source.id is None
                or edge.target.id is None
                or {edge.source.scope_key, edge.target.scope_key} != {edge.scope_key}
            ):
                problem = "one of its ends is gone or in another scope (changed behind the server's back)"
                return checked, RowFault("RELATIONSHIP", edge.target_id, problem, ("ends",))
            entry = last.get((edge.scope_key, edge.target_id))
            fault = _held("RELATIONSHIP", edge.target_id, edge.classes(), entry, implied=edge.implied)
            if fault is not None:
                return checked, fault
            checked += 1
    return checked, None


def _keys(reads: CoverageReads) -> tuple[int, RowFault | None]:
    keys = reads.keys()
    last = _last(reads, "api_key", [(None, k.key_id) for k in keys])
    for checked, key in enumerate(keys):
        fault = _held("api_key", key.key_id, key_classes(key), last.get((None, key.key_id)))
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
        value = reads.setting(key)
        changes = [e for e in reads.entries_about(kind, about) if e.after_digest is not None]
        entry = changes[-1] if changes else None
        if value is None and entry is None:
            continue
        if value is None:
            assert entry is not None
            problem = f"the {row_id} audit entry {entry.seq} ({entry.action}) set is gone (deleted behind its back)"
            return checked, RowFault(kind, row_id, problem, ("value",))
        if entry is None or entry.after_digest != value_digest(value):
            said = "no audit entry set it" if entry is None else f"it is not what audit entry {entry.seq} recorded"
            return checked, RowFault(kind, row_id, f"{said} (written behind the server's back)", ("value",))
        checked += 1
    return checked, None


def _held(
    kind: str, row_id: str, state: Classes, entry: AuditEntry | None, *, implied: bool = False
) -> RowFault | None:
    """The fault of a row whose state is ``state`` and whose last changing entry is ``entry``."""
    if entry is None:
        if implied:
            return None
        return RowFault(kind, row_id, "no audit entry wrote it (it was stored behind the server's back)")
    if entry.after_digest is None:
        problem = f"audit entry {entry.seq} ({entry.action}) removed it, yet it is stored (put back behind its back)"
        return RowFault(kind, row_id, problem)
    if entry.after_digest == digest(state):
        return None
    fields = tuple(changed_classes(entry.after_digest, state))
    what = f"its {', '.join(fields)} {'is' if len(fields) == 1 else 'are'}" if fields else "its state is"
    problem = f"{what} not what audit entry {entry.seq} ({entry.action}) recorded (edited behind the server's back)"
    return RowFault(kind, row_id, problem, fields)


def _last(reads: CoverageReads, kind: str, keys: Sequence[Key]) -> dict[Key, AuditEntry]:
    """The last entry that changed each of these rows (entries come in order: the last one wins)."""
    last: dict[Key, AuditEntry] = {}
    for entry in reads.entries_about(kind, [target_id for _, target_id in keys]):
        if entry.target_id is not None and (
            entry.after_digest is not None or entry.before_digest is not None or entry.action in REMOVING
        ):
            last[(entry.scope_key, entry.target_id)] = entry
    return last


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


def _pages(read: Callable[[int, int], list[T]], rowid: Callable[[T], int]) -> Iterator[list[T]]:
    after = 0
    while page := read(after, PAGE):
        yield page
        after = rowid(page[-1])
