"""The rows the audit covers, read in pages for ``engram audit verify``, and covered once when a
tenant's rows predate the digests that cover them. One implementation for both backends.

The rows are those that decide what a read returns or who may read it: memories, records,
relationships, API keys, webhook endpoints, and the tenant's policy and participant salt. Each audit entry about one
records its state digest (engramdb/audit_chain/states.py); verification holds every current row to
the last entry about it.

**Covering older rows.** Entries written before these digests covered less (a fact's lifecycle
only, a record's properties only, nothing of a key's revocation), so a tenant whose meta lacks
``audit_digests`` gets one ``audit.cover`` entry per row, recording the state the row is in now,
and a closing entry that says how many, all in one transaction (``cover_tenant``). They are
chained like any entry, so the covering is itself audited; what it vouches for is the state the
rows were in when this version first opened the tenant (verify with the older version first).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from engramdb.audit_chain.states import (
    DIGEST_SCHEME,
    digest,
    key_digest,
    memory_digest,
    record_digest,
    relationship_classes,
    relationship_id,
    value_digest,
)
from engramdb.storage.columns import AUDIT_COLUMNS, MEMORY_COLUMNS, memory_record
from engramdb.storage.knowledge.port import RecordRow
from engramdb.storage.knowledge.rows import Run, chunks
from engramdb.storage.knowledge.sql import RECORD_COLUMNS, Dialect
from engramdb.storage.rows import AuditDraft, AuditEntry, EdgeRow, KeyRecord, MemoryRecord, ScopeColumns

DIGESTS_KEY = "audit_digests"  # meta: which digest scheme covers the tenant's rows
_SCOPE = "agent_id, profile_id, privacy_scope, participant_scope_hash, sandbox_eligible"
_KEYS = "key_id, role, grant_json, secret_hash, created_at, label, revoked_at"
_WIDTH = len(MEMORY_COLUMNS.split(","))


class CoverageReads:
    """A tenant's covered rows in pages of rowid order, and the audit entries about them."""

    def __init__(self, run: Run, dialect: Dialect) -> None:
        self._run = run
        self._d = dialect

    def memory_page(self, after: int, limit: int) -> list[tuple[MemoryRecord, ScopeColumns]]:
        owned, params = self._d.owned("memories")
        rows = self._run(
            f"SELECT {MEMORY_COLUMNS}, {_SCOPE} FROM memories WHERE {owned}rowid > {self._d.mark} "
            f"ORDER BY rowid LIMIT {self._d.mark}",
            [*params, after, limit],
        )
        return [(memory_record(r[:_WIDTH]), _scope(r[3], r[_WIDTH:])) for r in rows]

    def record_page(self, after: int, limit: int) -> list[tuple[RecordRow, ScopeColumns]]:
        owned, params = self._d.owned("records")
        rows = self._run(
            f"SELECT {RECORD_COLUMNS}, {_SCOPE} FROM records WHERE {owned}rowid > {self._d.mark} "
            f"ORDER BY rowid LIMIT {self._d.mark}",
            [*params, after, limit],
        )
        return [(RecordRow(*r[:9]), _scope(r[2], r[9:])) for r in rows]

    def relationship_page(self, after: int, limit: int) -> list[EdgeRow]:
        owned, params = self._d.owned("r")
        rows = self._run(
            "SELECT r.rowid, r.scope_key, r.type, r.source_kind, coalesce(sr.record_id, sm.memory_id), "
            "coalesce(sr.scope_key, sm.scope_key), r.target_kind, coalesce(tr.record_id, tm.memory_id), "
            "coalesce(tr.scope_key, tm.scope_key), r.properties_json, sm.event_json, tm.event_json "
            f"FROM relationships r {self._end('s', 'source')} {self._end('t', 'target')} "
            f"WHERE {owned}r.rowid > {self._d.mark} ORDER BY r.rowid LIMIT {self._d.mark}",
            [*params, after, limit],
        )
        return [_edge_row(r) for r in rows]

    def _end(self, alias: str, column: str) -> str:
        """The joins that find a relationship's end by its rowid, in the relationship's tenant."""
        same = f" AND {alias}r.tenant = r.tenant" if self._d.tenant is not None else ""
        mem = f" AND {alias}m.tenant = r.tenant" if self._d.tenant is not None else ""
        return (
            f"LEFT JOIN records {alias}r ON r.{column}_kind = 'RECORD' AND {alias}r.rowid = r.{column}{same} "
            f"LEFT JOIN memories {alias}m ON r.{column}_kind = {alias}m.source AND {alias}m.rowid = r.{column}{mem}"
        )

    def keys(self) -> list[KeyRecord]:
        owned, params = self._d.owned("api_keys")
        where = f" WHERE {owned[: -len(' AND ')]}" if owned else ""
        return [KeyRecord(*r) for r in self._run(f"SELECT {_KEYS} FROM api_keys{where} ORDER BY key_id", params)]

    def webhooks(self) -> list[tuple[str, str, str]]:
        """The tenant's webhook endpoints: (id, url, kinds as JSON)."""
        owned, params = self._d.owned("webhooks")
        where = f" WHERE {owned[: -len(' AND ')]}" if owned else ""
        rows = self._run(f"SELECT webhook_id, url, kinds_json FROM webhooks{where} ORDER BY webhook_id", params)
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def setting(self, key: str) -> str | None:
        owned, params = self._d.owned("meta")
        rows = self._run(f"SELECT value FROM meta WHERE {owned}key = {self._d.mark}", [*params, key])
        return str(rows[0][0]) if rows else None

    def head_seq(self) -> int:
        """The last entry's seq (0: none): read before a page, it tells which entries the page's
        rows must already show (those up to it) from those that may have committed since."""
        owned, params = self._d.owned("audit_log")
        where = f" WHERE {owned[: -len(' AND ')]}" if owned else ""
        rows = self._run(f"SELECT max(seq) FROM audit_log{where}", params)
        return int(rows[0][0] or 0) if rows else 0

    def entries_about(self, target_kind: str, target_ids: Sequence[str] | None) -> list[AuditEntry]:
        """The audit entries about these targets of one kind (every target of it: None), in order."""
        owned, params = self._d.owned("audit_log")
        m = self._d.mark
        found: list[AuditEntry] = []
        for chunk in [None] if target_ids is None else chunks(list(dict.fromkeys(target_ids)), 500):
            which = "" if chunk is None else f" AND target_id IN ({self._d.marks(len(chunk))})"
            rows = self._run(
                f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE {owned}target_kind = {m}{which} ORDER BY seq",
                [*params, target_kind, *(chunk or ())],
            )
            found += [AuditEntry(*r) for r in rows]
        return sorted(found, key=lambda e: e.seq) if target_ids is not None else found


def _scope(scope_key: str, c: Sequence[Any]) -> ScopeColumns:
    return ScopeColumns(scope_key, c[0], c[1], c[2], c[3], bool(c[4]))


def _edge_row(r: Sequence[Any]) -> EdgeRow:
    """A relationship from its columns, its ends' public ids and scopes, and their events."""
    scope_key, type, source, target = r[1], r[2], (r[3], r[4] or ""), (r[6], r[7] or "")
    implied = (
        type == "DERIVED_FROM"
        and (source[0], target[0]) == ("MEMORY_FACT", "EPISODE")
        and r[9] == "{}"
        and r[5] == r[8] == scope_key
        and _implies(r[10], r[7], r[11])
    )
    return EdgeRow(
        rowid=int(r[0]),
        scope_key=scope_key,
        target_id=relationship_id(r[4] or "?", type, r[7] or "?"),
        state=relationship_classes(scope_key, type, source, target, r[9]),
        ends_held=r[4] is not None and r[7] is not None and r[5] == r[8] == scope_key,
        implied=implied,
    )


def _implies(fact_event: str | None, episode_id: str | None, episode_event: str | None) -> bool:
    """Whether a fact's event names this episode as its source, as ``link_derivation`` links it: by
    the episode's eventId or by the host's turn id the episode carries."""
    if fact_event is None or episode_event is None:
        return False
    named = json.loads(fact_event).get("sourceEventId")
    return bool(named) and named in (episode_id, json.loads(episode_event).get("sourceEventId"))


Append = Callable[[Sequence[AuditDraft]], object]  # a transaction's audit_many
PAGE = 1_000
T = TypeVar("T")


class CoveringTransaction(Protocol):
    """What covering a tenant needs of a write transaction (both backends' transactions have it)."""

    def get_meta(self, key: str) -> str | None: ...
    def put_meta(self, key: str, value: str) -> None: ...
    def audit_many(self, drafts: Sequence[AuditDraft]) -> list[AuditEntry]: ...


def ensure_covered(tx: CoveringTransaction, reads: CoverageReads, tenant: str) -> int | None:
    """Cover ``tenant``'s rows unless its meta says they are covered (then None); how many were."""
    if tx.get_meta(DIGESTS_KEY) == DIGEST_SCHEME:
        return None
    covered = cover_tenant(reads, tx.audit_many, tenant)
    tx.put_meta(DIGESTS_KEY, DIGEST_SCHEME)
    return covered


def cover_tenant(reads: CoverageReads, append: Append, tenant: str) -> int:
    """Append one ``audit.cover`` entry per covered row of ``tenant`` (its current state), then one
    closing entry; return how many rows were covered. Runs inside the caller's write transaction."""
    covered = 0
    for drafts in _cover_drafts(reads, tenant):
        if drafts:
            append(drafts)
            covered += len(drafts)
    if covered:
        closing = AuditDraft(
            action="audit.cover",
            actor_key_id=None,
            actor_role="system",
            target_kind="tenant",
            target_id=tenant,
            reason=f"{covered} rows written before the audit's digests covered their whole state: "
            "their state when this version first opened the tenant",
        )
        append([closing])
    return covered


def _cover_drafts(reads: CoverageReads, tenant: str) -> Iterator[list[AuditDraft]]:
    def draft(kind: str, scope_key: str | None, target_id: str, after: str) -> AuditDraft:
        return AuditDraft(
            action="audit.cover",
            actor_key_id=None,
            actor_role="system",
            target_kind=kind,
            target_id=target_id,
            scope_key=scope_key,
            after_digest=after,
        )

    for memories in _pages(reads.memory_page, lambda row: row[0].rowid):
        yield [draft(m.source, m.scope_key, m.memory_id, memory_digest(m)) for m, _ in memories]
    for records in _pages(reads.record_page, lambda row: row[0].rowid):
        yield [draft("RECORD", r.scope_key, r.record_id, record_digest(r)) for r, _ in records]
    for edges in _pages(reads.relationship_page, lambda row: row.rowid):
        yield [draft("RELATIONSHIP", e.scope_key, e.target_id, digest(e.state)) for e in edges if not e.implied]
    yield [draft("api_key", None, k.key_id, key_digest(k)) for k in reads.keys()]
    salt = reads.setting("participant_salt")
    if salt is not None:  # (the policy's entries have always recorded its document's digest)
        yield [draft("tenant", None, tenant, value_digest(salt))]


def _pages(read: Callable[[int, int], list[T]], rowid: Callable[[T], int]) -> Iterator[list[T]]:
    after = 0
    while page := read(after, PAGE):
        yield page
        after = rowid(page[-1])
