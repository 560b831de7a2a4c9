"""The where-tree as SQL, for either backend.

Each condition on a record becomes ``<alias>.rowid IN (…)`` over the typed values (indexed by
scope, property and value), or over the relationships for a related label; SQL engines run such
a set once and probe it, so a selective condition costs what its index lookup costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engramdb.storage.knowledge.port import (
    All,
    AnyOf,
    Compare,
    Component,
    Exists,
    Member,
    Node,
    Not,
    Query,
    Related,
    Value,
)

RECORD_COLUMNS = "rowid, record_id, scope_key, label, properties_json, origin, version, created_at, updated_at"
PSEUDO_COLUMNS = {"$id": "record_id", "$createdAt": "created_at", "$updatedAt": "updated_at"}
PARTS = {"year": (1, 4), "month": (6, 2), "day": (9, 2), "hour": (12, 2), "minute": (15, 2), "second": (18, 2)}
_OPS = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


@dataclass(frozen=True)
class Dialect:
    """What differs between the backends' statements: the placeholder and PostgreSQL's tenant."""

    mark: str  # "?" (SQLite) or "%s" (PostgreSQL)
    tenant: str | None = None  # PostgreSQL: every row carries its tenant

    def owned(self, alias: str) -> tuple[str, list[Any]]:
        """``<alias>.tenant = ? AND`` where rows carry a tenant, else nothing."""
        if self.tenant is None:
            return "", []
        return f"{alias}.tenant = {self.mark} AND ", [self.tenant]

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)


@dataclass
class Compiled:
    """A piece of SQL and its parameters, in order."""

    sql: str
    params: list[Any] = field(default_factory=list)


class WhereCompiler:
    """Compiles where-trees in one scope; each nested label gets its own alias."""

    def __init__(self, dialect: Dialect, scope_key: str) -> None:
        self.d = dialect
        self.scope_key = scope_key
        self._aliases = 0

    def roots(self, query: Query, alias: str = "r") -> Compiled:
        """``FROM records <alias> WHERE …``: the records of the scope, its labels and its where."""
        owned, params = self.d.owned(alias)
        sql = f"FROM records {alias} WHERE {owned}{alias}.scope_key = {self.d.mark}"
        params.append(self.scope_key)
        if query.labels:
            sql += f" AND {alias}.label IN ({self.d.marks(len(query.labels))})"
            params += list(query.labels)
        condition = self.condition(query.where, alias)
        return Compiled(f"{sql} AND {condition.sql}", params + condition.params)

    def condition(self, node: Node, alias: str) -> Compiled:
        if isinstance(node, All):
            return self._join([self.condition(n, alias) for n in node.items], " AND ", "1 = 1")
        if isinstance(node, AnyOf):
            return self._join([self.condition(n, alias) for n in node.items], " OR ", "1 = 0")
        if isinstance(node, Not):
            inner = self.condition(node.item, alias)
            return Compiled(f"NOT ({inner.sql})", inner.params)
        if isinstance(node, Related):
            return self._related(node, alias)
        if isinstance(node, (Compare, Member, Exists, Component)) and node.name in PSEUDO_COLUMNS:
            return self._pseudo(node, alias)
        return self._valued(node, alias)

    @staticmethod
    def _join(parts: Sequence[Compiled], glue: str, empty: str) -> Compiled:
        if not parts:
            return Compiled(empty)
        return Compiled("(" + glue.join(p.sql for p in parts) + ")", [x for p in parts for x in p.params])

    def _valued(self, node: Compare | Member | Exists | Component, alias: str) -> Compiled:
        """``<alias>.rowid [NOT] IN (the records with a value of the property that matches)``."""
        m = self.d.mark
        owned, params = self.d.owned("v")
        base = f"SELECT v.record FROM record_values v WHERE {owned}v.scope_key = {m} AND v.name = {m}"
        params += [self.scope_key, node.name]
        negated = False
        if isinstance(node, Exists):
            match, extra, negated = "", [], not node.present
        elif isinstance(node, Member):
            parts = [self._match(value, "$eq") for value in node.values]
            match = " AND (" + " OR ".join(p.sql for p in parts) + ")"
            extra, negated = [x for p in parts for x in p.params], node.negated
        elif isinstance(node, Component):
            start, length = PARTS[node.part]
            cut = f"CAST(substr(v.text_key, {start}, {length}) AS INTEGER)"
            match = f" AND v.kind = 'datetime' AND {cut} {_OPS[node.op]} {m}"
            extra = [node.number]
        elif node.op == "$ne":
            part = self._match(node.value, "$eq")
            match, extra, negated = f" AND {part.sql}", part.params, True
        else:
            part = self._match(node.value, node.op)
            match, extra = f" AND {part.sql}", part.params
        return Compiled(f"{alias}.rowid {'NOT ' if negated else ''}IN ({base}{match})", params + extra)

    def _match(self, value: Value, op: str) -> Compiled:
        """Whether one stored value ``v`` matches ``value`` under ``op``."""
        m = self.d.mark
        if op in ("$contains", "$startsWith", "$endsWith"):
            text = _escape_like(value.folded or "")
            pattern = {"$contains": f"%{text}%", "$startsWith": f"{text}%", "$endsWith": f"%{text}"}[op]
            return Compiled(f"(v.kind = 'string' AND v.text_fold LIKE {m} ESCAPE '\\')", [pattern])
        sign = _OPS[op]
        if value.kind in ("number", "boolean"):
            return Compiled(f"(v.kind = {m} AND v.number_value {sign} {m})", [value.kind, value.number])
        if op == "$eq":  # the indexed prefix first, then the whole text
            return Compiled(f"(v.kind = {m} AND v.text_key = {m} AND v.text_value = {m})",
                            [value.kind, value.key, value.text])  # fmt: skip
        return Compiled(f"(v.kind = {m} AND v.text_value {sign} {m})", [value.kind, value.text])

    def _pseudo(self, node: Compare | Member | Exists | Component, alias: str) -> Compiled:
        column = f"{alias}.{PSEUDO_COLUMNS[node.name]}"
        m = self.d.mark
        if isinstance(node, Exists):
            return Compiled("1 = 1" if node.present else "1 = 0")
        if isinstance(node, Member):
            texts = [v.text for v in node.values]
            return Compiled(f"{column} {'NOT ' if node.negated else ''}IN ({self.d.marks(len(texts))})", texts)
        if isinstance(node, Component):
            start, length = PARTS[node.part]
            return Compiled(f"CAST(substr({column}, {start}, {length}) AS INTEGER) {_OPS[node.op]} {m}", [node.number])
        if node.op in ("$contains", "$startsWith", "$endsWith"):
            text = _escape_like(node.value.text or "")
            pattern = {"$contains": f"%{text}%", "$startsWith": f"{text}%", "$endsWith": f"%{text}"}[node.op]
            return Compiled(f"{column} LIKE {m} ESCAPE '\\'", [pattern])
        return Compiled(f"{column} {_OPS[node.op]} {m}", [node.value.text])

    def _related(self, node: Related, alias: str) -> Compiled:
        """``<alias>.rowid IN (the records linked to a matching record of the label)``.

        The related records' set appears once in the statement whatever the direction, so a
        where nested n labels deep stays n subqueries long (not 2^n for either direction).
        """
        self._aliases += 1
        other = f"r{self._aliases}"
        inner = self.roots(Query(labels=(node.label,), where=node.where), other)
        m = self.d.mark
        x, e = f"x{self._aliases}", f"e{self._aliases}"
        owned, params = self.d.owned(e)
        ends = {"out": (f"{e}.source", f"{e}.target = {x}.rowid"), "in": (f"{e}.target", f"{e}.source = {x}.rowid"),
                "any": (f"CASE WHEN {e}.target = {x}.rowid THEN {e}.source ELSE {e}.target END",
                        f"(({e}.target_kind = 'RECORD' AND {e}.target = {x}.rowid) "
                        f"OR ({e}.source_kind = 'RECORD' AND {e}.source = {x}.rowid))")}[node.direction]  # fmt: skip
        sql = (f"{alias}.rowid IN (SELECT {ends[0]} FROM (SELECT {other}.rowid {inner.sql}) {x} "
               f"JOIN relationships {e} ON {owned}{e}.scope_key = {m} AND {e}.source_kind = 'RECORD' "
               f"AND {e}.target_kind = 'RECORD' AND {ends[1]}")  # fmt: skip
        params = [*inner.params, *params, self.scope_key]
        if node.type is not None:
            sql += f" AND {e}.type = {m}"
            params.append(node.type)
        return Compiled(sql + ")", params)


def order_by(query: Query, dialect: Dialect, alias: str = "r") -> Compiled:
    """``ORDER BY``: properties by their smallest value (numbers, then text), absent ones last."""
    parts: list[str] = []
    params: list[Any] = []
    for order in query.order:
        way = "DESC" if order.descending else "ASC"
        if order.name in PSEUDO_COLUMNS:
            parts.append(f"{alias}.{PSEUDO_COLUMNS[order.name]} {way}")
            continue
        for column in ("number_value", "text_key"):
            parts.append(f"(SELECT min(o.{column}) FROM record_values o WHERE o.record = {alias}.rowid "
                         f"AND o.name = {dialect.mark}) {way} NULLS LAST")  # fmt: skip
            params.append(order.name)
    parts.append(f"{alias}.created_at DESC, {alias}.rowid DESC")
    return Compiled(" ORDER BY " + ", ".join(parts), params)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
