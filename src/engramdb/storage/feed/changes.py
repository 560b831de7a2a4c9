"""The change feed's one read of the audit log: entries of the given actions after a seq, with the
five fields of their scope from ``scopes``. Never the reason (an erasure empties it; the feed
carries no text at all), so nothing read here can hold what was erased."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.feed.port import ChangeRow
from engramdb.storage.knowledge.rows import Run
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.rows import ScopeColumns

_COLUMNS = (
    "a.seq, a.at, a.action, a.actor_role, a.target_kind, a.target_id, a.scope_key, "
    "s.agent_id, s.profile_id, s.privacy_scope, s.participant_scope_hash, s.sandbox_eligible"
)


def _change(row: Sequence[Any]) -> ChangeRow:
    scope = None if row[7] is None else ScopeColumns(row[6], row[7], row[8], row[9], row[10], bool(row[11]))
    return ChangeRow(int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], scope)


class ChangeLog:
    """The feed of one tenant (``ChangeReads``), over a statement runner."""

    def __init__(self, run: Run, dialect: Dialect) -> None:
        self._run = run
        self._d = dialect

    def head(self) -> int:
        owned, params = self._d.owned("audit_log")
        rows = self._run(f"SELECT max(seq) FROM audit_log WHERE {owned}seq > 0", params)
        return int(rows[0][0] or 0) if rows else 0

    def changes(
        self, after_seq: int, limit: int, actions: Sequence[str], *, through_seq: int | None, scope_key: str | None
    ) -> list[ChangeRow]:
        m = self._d.mark
        owned, params = self._d.owned("a")
        join = "s.tenant = a.tenant AND " if self._d.tenant is not None else ""
        where = f"{owned}a.seq > {m} AND a.action IN ({self._d.marks(len(actions))})"
        values: list[Any] = [*params, after_seq, *actions]
        if through_seq is not None:
            where, values = f"{where} AND a.seq <= {m}", [*values, through_seq]
        if scope_key is not None:
            where, values = f"{where} AND a.scope_key = {m}", [*values, scope_key]
        rows = self._run(
            f"SELECT {_COLUMNS} FROM audit_log a LEFT JOIN scopes s ON {join}s.scope_key = a.scope_key "
            f"WHERE {where} ORDER BY a.seq LIMIT {m}",
            [*values, limit],
        )
        return [_change(r) for r in rows]
