"""Erasure: deleting memories so that no text of them is left, one implementation for both backends.

A participant's memories are the rows of every scope whose participantScopeHash is theirs (the
scope key is a digest over all five scope fields, so a scope belongs to one participant). Erasing
them deletes memories (every version), tombstones, records with their values, vectors, history
and relationships, a model's links and queued jobs (their texts), and erases the reasons of the
audit entries about those scopes. The audit chain covers a salted digest of each reason
(core/audit.py), so the chain still verifies; entries
written before reasons had digests keep their reasons (erasing them would break the chain) and
are counted as kept.

What makes the deleted bytes leave the files is the backend's ``scrub`` (SQLite: secure_delete
and a truncating WAL checkpoint; PostgreSQL: a table rewrite).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engramdb.storage.knowledge.rows import Run, chunks
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.knowledge.writes import GraphWrites
from engramdb.storage.rows import Erasure


class MemoryKey(Protocol):
    """What deleting a memory row needs of it (a MemoryRecord or an aging row)."""

    @property
    def rowid(self) -> int: ...
    @property
    def memory_id(self) -> str: ...


# Tables holding a scope's rows, children first (record_history has no scope: it goes by record).
# model_links and model_jobs hold a model's reasons and the turns queued for extraction.
_SCOPED = (
    "relationships",
    "record_values",
    "record_vectors",
    "records",
    "tombstones",
    "model_links",
    "model_jobs",
    "memories",
)


def participant_scopes(run: Run, d: Dialect, participant_hash: str) -> list[str]:
    """Return the scope keys that hold memories or records of this participant: the scopes named
    for it (the ``scopes`` table, by participant) that still hold a row. Reading the memories and
    records by participant went through every row of the tenant."""
    owned_s, params_s = d.owned("s")
    owned_m, params_m = d.owned("m")
    owned_r, params_r = d.owned("r")
    rows = run(
        f"SELECT s.scope_key FROM scopes s WHERE {owned_s}s.participant_scope_hash = {d.mark} "
        f"AND (EXISTS (SELECT 1 FROM memories m WHERE {owned_m}m.scope_key = s.scope_key) "
        f"OR EXISTS (SELECT 1 FROM records r WHERE {owned_r}r.scope_key = s.scope_key))",
        [*params_s, participant_hash, *params_m, *params_r],
    )
    return sorted(str(r[0]) for r in rows)


def preview(run: Run, d: Dialect, scope_keys: Sequence[str]) -> Erasure:
    """Return what erasing these scopes would take, without taking it."""
    counts = dict.fromkeys(("memories", "records", "relationships", "tombstones"), 0)
    reasons, kept = 0, 0
    for chunk in chunks(list(scope_keys), 400):
        marks = d.marks(len(chunk))
        for table in counts:
            owned, params = d.owned(table)
            counts[table] += int(
                run(f"SELECT count(*) FROM {table} WHERE {owned}scope_key IN ({marks})", [*params, *chunk])[0][0]
            )
        owned, params = d.owned("audit_log")
        row = run(
            f"SELECT sum(CASE WHEN reason_digest IS NOT NULL THEN 1 ELSE 0 END), "
            f"sum(CASE WHEN reason_digest IS NULL THEN 1 ELSE 0 END) FROM audit_log "
            f"WHERE {owned}scope_key IN ({marks}) AND reason IS NOT NULL",
            [*params, *chunk],
        )[0]
        reasons, kept = reasons + int(row[0] or 0), kept + int(row[1] or 0)
    return Erasure(
        scopes=len(scope_keys),
        memories=counts["memories"],
        records=counts["records"],
        relationships=counts["relationships"],
        tombstones=counts["tombstones"],
        audit_reasons_erased=reasons,
        audit_reasons_kept=kept,
    )


class ErasureWrites(GraphWrites):
    """Deleting without a trace, inside a store transaction (the knowledge writes come with it)."""

    def participant_scopes(self, participant_hash: str) -> list[str]:
        """The participant's scope keys, as this transaction sees them."""
        return participant_scopes(self._run, self._d, participant_hash)

    def erase_scopes(self, scope_keys: Sequence[str]) -> Erasure:
        """Delete every row of these scopes and erase their audit reasons; return the counts."""
        before = preview(self._run, self._d, scope_keys)
        for chunk in chunks(list(scope_keys), 400):
            marks = self._d.marks(len(chunk))
            owned, params = self._d.owned("records")
            self._run(
                f"DELETE FROM record_history WHERE record IN (SELECT rowid FROM records WHERE "
                f"{owned}scope_key IN ({marks}))",
                [*params, *chunk],
            )
            for table in _SCOPED:
                owned, params = self._d.owned(table)
                self._run(f"DELETE FROM {table} WHERE {owned}scope_key IN ({marks})", [*params, *chunk])
            self._erase_reasons(f"scope_key IN ({marks})", list(chunk))
            owned, params = self._d.owned("model_calls")  # the usage ledger stays; its error text goes
            self._run(f"UPDATE model_calls SET error = NULL WHERE {owned}scope_key IN ({marks})", [*params, *chunk])
        self._erased(scope_keys)
        return before

    def delete_memory_rows(self, scope_key: str, rows: Sequence[MemoryKey]) -> int:
        """Delete these memories of one scope (and the relationships touching them), and erase the
        reasons of their tombstones and of the audit entries about them and those tombstones; return
        how many rows went."""
        if not rows:
            return 0
        m, rowids = self._d.mark, [r.rowid for r in rows]
        marks = self._d.marks(len(rowids))
        owned, params = self._d.owned("relationships")
        self._run(
            f"DELETE FROM relationships WHERE {owned}scope_key = {m} AND ((source_kind <> 'RECORD' AND source "
            f"IN ({marks})) OR (target_kind <> 'RECORD' AND target IN ({marks})))",
            [*params, scope_key, *rowids, *rowids],
        )
        owned, params = self._d.owned("memories")
        gone = self._run(
            f"DELETE FROM memories WHERE {owned}scope_key = {m} AND rowid IN ({marks}) RETURNING 1",
            [*params, scope_key, *rowids],
        )
        ids = sorted({r.memory_id for r in rows})
        owned, params = self._d.owned("model_links")
        id_marks = self._d.marks(len(ids))
        self._run(
            f"DELETE FROM model_links WHERE {owned}scope_key = {m} AND (from_id IN ({id_marks}) "
            f"OR to_id IN ({id_marks}))",
            [*params, scope_key, *ids, *ids],
        )
        # The slot's tombstones stay (a value corrected or retracted away must not come back), without
        # the reasons given for them: free text about the fact deleted, like their audit entries'.
        owned, params = self._d.owned("tombstones")
        tombstones = self._run(
            f"UPDATE tombstones SET reason = NULL, lift_reason = NULL WHERE {owned}scope_key = {m} "
            f"AND fact_id IN ({id_marks}) RETURNING tombstone_id",
            [*params, scope_key, *ids],
        )
        about = [*ids, *(str(t[0]) for t in tombstones)]
        self._erase_reasons(f"scope_key = {m} AND target_id IN ({self._d.marks(len(about))})", [scope_key, *about])
        self._erased([scope_key])
        return len(gone)

    def _erased(self, scope_keys: Sequence[str]) -> None:
        """Tell in-memory copies of these scopes (in any process) that rows went; a backend that keeps
        none does nothing."""

    def _erase_reasons(self, where: str, values: list[object]) -> None:
        owned, params = self._d.owned("audit_log")
        self._run(
            f"UPDATE audit_log SET reason = NULL, reason_nonce = NULL WHERE {owned}{where} "
            "AND reason IS NOT NULL AND reason_digest IS NOT NULL",
            [*params, *values],
        )
