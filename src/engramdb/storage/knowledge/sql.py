"""The where-tree as SQL, for either backend.

A condition on a record is a probe: ``EXISTS`` over its typed values, found by the record and the
property (one index seek, covered by the index). A related label's matching records are one
named set in the ``WITH`` prefix, linked through the relationships by index, so a where nested n
labels deep is n flat sets computed once each. A set (the roots, or a related label's) is found
either by its label, in record-time order (a page newest first stops early), or, given a
*driver*, from one equality's value index (few records match it): the store picks which.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engramdb.errors import InvalidInputError
from engramdb.storage.knowledge.port import (
    BUDGET,
    KEY_CHARS,
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
    """What differs between the backends' statements: the placeholder, PostgreSQL's tenant, and
    how to make SQLite find a set from its driver (SQLite's planner has no per-value statistics)."""

    mark: str  # "?" (SQLite) or "%s" (PostgreSQL)
    tenant: str | None = None  # PostgreSQL: every row carries its tenant
    rowid_only: str = ""  # SQLite: " NOT INDEXED" (rowid lookups only); PostgreSQL plans by itself
    # PostgreSQL, evaluating a where whole (a count, aggregates): a related label is the set of records
    # linked to it, one hashed set its planner joins; a page, and SQLite always, probe each record's links.
    links_as_sets: bool = False
    # PostgreSQL: a row read to link it is locked until the transaction ends, so a delete committing
    # meanwhile waits (SQLite's write transaction already excludes every other writer).
    share_lock: str = ""
    # PostgreSQL turns each top-level EXISTS / IN (subquery) into a semi- or anti-join and orders them
    # all: its planning time grows with the square of their number (0.93 s at 100, > 60 s at 500). Past
    # this many, a condition stays a probe of each record (a subplan planned on its own). None: all join.
    joined_conditions: int | None = None

    def owned(self, alias: str) -> tuple[str, list[Any]]:
        """``<alias>.tenant = ? AND`` where rows carry a tenant, else nothing."""
        if self.tenant is None:
            return "", []
        return f"{alias}.tenant = {self.mark} AND ", [self.tenant]

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)

    def bytes_of(self, column: str) -> str:
        """The size of a text column in UTF-8 bytes (SQLite's ``length`` of text counts characters)."""
        return f"octet_length({column})" if self.tenant is not None else f"length(CAST({column} AS BLOB))"

    @property
    def in_order(self) -> str:
        """A join that keeps its tables in the order written: SQLite's ``CROSS JOIN`` (its planner may
        otherwise walk a whole table its statistics call small enough); PostgreSQL plans by itself."""
        return "JOIN" if self.tenant is not None else "CROSS JOIN"

    def scoped(self, table: str, alias: str, scope_keys: Sequence[str] | None) -> tuple[str, str, list[Any]]:
        """The ``FROM`` and ``WHERE`` of a read of ``table`` (as ``alias``) in the tenant, or in ``scope_keys``
        only, and their parameters in order. SQLite starts from the keys (a JSON array, one parameter however
        many) and reads each scope through its index; PostgreSQL plans ``= ANY`` of the keys."""
        owned, params = self.owned(alias)
        if scope_keys is None:
            return f"{table} {alias}", f"{owned}TRUE", params
        if self.tenant is None:
            keys = f"json_each({self.mark}) scoped {self.in_order} {table} {alias} ON {alias}.scope_key = scoped.value"
            return keys, f"{owned}TRUE", [json.dumps(list(scope_keys)), *params]
        return f"{table} {alias}", f"{owned}{alias}.scope_key = ANY({self.mark})", [*params, list(scope_keys)]


@dataclass
class Compiled:
    """A piece of SQL and its parameters, in order; ``prefix`` (a ``WITH`` clause and its
    parameters) goes before the whole statement the piece ends up in."""

    sql: str
    params: list[Any] = field(default_factory=list)
    prefix: str = ""
    prefix_params: list[Any] = field(default_factory=list)


def drivers(where: Node) -> list[Compare | Member]:
    """The equalities a set may be found from: those every match must meet (top level)."""
    items = where.items if isinstance(where, All) else (where,)
    found: list[Compare | Member] = []
    for node in items:
        if isinstance(node, Compare) and node.op == "$eq" and node.name not in PSEUDO_COLUMNS:
            found.append(node)
        elif isinstance(node, Member) and not node.negated and node.name not in PSEUDO_COLUMNS:
            found.append(node)
    return found


class WhereCompiler:
    """Compiles where-trees in one scope; each nested label gets its own alias."""

    def __init__(self, dialect: Dialect, scope_key: str, *, whole: bool = False) -> None:
        self.d = dialect
        self.scope_key = scope_key
        self._sets = whole and dialect.links_as_sets
        self._aliases = 0
        self._related_sets: list[Compiled] = []  # x1(id) AS (…), innermost first

    def roots(self, query: Query, alias: str = "r", driver: Compare | Member | None = None) -> Compiled:
        """``FROM records <alias> WHERE …``: the records of the scope, its labels and its where
        (found from ``driver``, one of ``drivers(query.where)``, when given)."""
        body = self._records(query, alias, driver)
        if not self._related_sets:
            return body
        prefix = "WITH " + ", ".join(c.sql for c in self._related_sets) + " "
        return Compiled(body.sql, body.params, prefix, [x for c in self._related_sets for x in c.params])

    def value_set(self, node: Compare | Member, labels: Sequence[str] = (), *, limit: int | None = None) -> Compiled:
        """``SELECT v.record FROM record_values v WHERE …``: the records (of ``labels``, if named)
        meeting one equality."""
        m = self.d.mark
        owned, params = self.d.owned("v")
        values = node.values if isinstance(node, Member) else (node.value,)
        match = self._one_of(values)
        labelled = f"v.label IN ({self.d.marks(len(labels))}) AND " if labels else ""
        sql = (
            f"SELECT v.record FROM record_values v WHERE {owned}v.scope_key = {m} AND {labelled}v.name = {m} "
            f"AND {match.sql}"
        )
        params = [*params, self.scope_key, *labels, node.name, *match.params]
        if limit is not None:
            sql += f" LIMIT {m}"
            params.append(limit)
        return Compiled(sql, params)

    def _records(self, query: Query, alias: str, driver: Compare | Member | None) -> Compiled:
        owned, params = self.d.owned(alias)
        where = query.where
        sql = f"FROM records {alias}"
        if driver is not None:  # the driver's records, looked up by rowid; the rest probed
            found = self.value_set(driver, query.labels)
            sql += f"{self.d.rowid_only} WHERE {alias}.rowid IN ({found.sql}) AND "
            params = found.params + params
            items = where.items if isinstance(where, All) else (where,)
            where = All(tuple(n for n in items if n is not driver))
        else:
            sql += " WHERE "
        sql += f"{owned}{alias}.scope_key = {self.d.mark}"
        params.append(self.scope_key)
        if query.labels:
            sql += f" AND {alias}.label IN ({self.d.marks(len(query.labels))})"
            params += list(query.labels)
        condition = self._top(where, alias)
        return Compiled(f"{sql} AND {condition.sql}", params + condition.params)

    def _top(self, where: Node, alias: str) -> Compiled:
        """The conditions every match must meet; past ``joined_conditions`` of them, each one that
        reads another table is kept a probe of the record (``IS TRUE``: PostgreSQL joins only an
        EXISTS or IN standing alone in the top-level AND). The equalities come first: a set is
        found from one of them when few records meet it."""
        limit = self.d.joined_conditions
        if limit is None:
            return self.condition(where, alias)
        found = drivers(where)
        conjuncts = _conjuncts(where)
        parts, joined = [], 0
        for node in [*(n for n in conjuncts if n in found), *(n for n in conjuncts if n not in found)]:
            part = self.condition(node, alias)
            if not _on_columns(node):
                joined += 1
                if joined > limit:
                    part = Compiled(f"({part.sql}) IS TRUE", part.params)
            parts.append(part)
        return self._join(parts, " AND ", "1 = 1")

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
        """``[NOT] EXISTS (a value of the property on this record that matches)``."""
        m = self.d.mark
        owned, params = self.d.owned("v")
        base = f"SELECT 1 FROM record_values v WHERE {owned}v.record = {alias}.rowid AND v.name = {m}"
        params.append(node.name)
        negated = False
        if isinstance(node, Exists):
            match, extra, negated = "", [], not node.present
        elif isinstance(node, Member):
            one_of = self._one_of(node.values)
            match, extra, negated = f" AND {one_of.sql}", one_of.params, node.negated
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
        return Compiled(f"{'NOT ' if negated else ''}EXISTS ({base}{match})", params + extra)

    def _one_of(self, values: Sequence[Value]) -> Compiled:
        """Whether one stored value ``v`` equals one of ``values``: an IN list per kind (and for texts
        longer than the indexed prefix, the whole texts too), so a thousand values are a handful of
        expressions, not an OR per value (SQLite parses an expression at most 1,000 deep)."""
        m = self.d.mark
        groups: dict[tuple[str, bool], list[Value]] = {}
        for value in values:
            is_long = value.kind not in ("number", "boolean") and len(value.text or "") >= KEY_CHARS
            groups.setdefault((value.kind, is_long), []).append(value)
        parts = []
        for (kind, is_long), group in groups.items():
            if kind in ("number", "boolean"):
                parts.append(
                    Compiled(
                        f"(v.kind = {m} AND v.number_value IN ({self.d.marks(len(group))}))",
                        [kind, *(v.number for v in group)],
                    )
                )
                continue
            sql = f"(v.kind = {m} AND v.text_key IN ({self.d.marks(len(group))})"
            params: list[Any] = [kind, *(v.key for v in group)]
            if is_long:  # the prefix is a function of the text: the text being one of them, so is its prefix
                sql += f" AND v.text_value IN ({self.d.marks(len(group))})"
                params += [v.text for v in group]
            parts.append(Compiled(sql + ")", params))
        return self._join(parts, " OR ", "1 = 0")

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
        if op == "$eq":  # the indexed prefix; the whole text only where the prefix cannot tell
            if len(value.text or "") < KEY_CHARS:
                return Compiled(f"(v.kind = {m} AND v.text_key = {m})", [value.kind, value.key])
            return Compiled(
                f"(v.kind = {m} AND v.text_key = {m} AND v.text_value = {m})", [value.kind, value.key, value.text]
            )
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
        """The records linked (by type, in direction) to one of the label's matching records."""
        self._aliases += 1
        n = self._aliases
        found = drivers(node.where)  # a related set is computed whole: from an equality if it has one
        if found and node.where == found[0]:  # that equality alone: its values are the set
            inner = self.value_set(found[0], (node.label,))
        else:
            inner = self._records(Query(labels=(node.label,), where=node.where), f"r{n}", found[0] if found else None)
            inner = Compiled(f"SELECT r{n}.rowid {inner.sql}", inner.params)
        self._related_sets.append(Compiled(f"x{n}(id) AS ({inner.sql})", inner.params))
        sides = {
            "out": [("source", "target")],
            "in": [("target", "source")],
            "any": [("source", "target"), ("target", "source")],
        }[node.direction]
        parts = [self._linked(near, far, node.type, f"e{n}", f"x{n}", alias) for near, far in sides]
        if not self._sets:
            return self._join(parts, " OR ", "1 = 0")
        return Compiled(
            f"{alias}.rowid IN ({' UNION ALL '.join(p.sql for p in parts)})", [x for p in parts for x in p.params]
        )

    def _linked(self, near: str, far: str, type_: str | None, e: str, related: str, alias: str) -> Compiled:
        """``EXISTS`` a relationship from this record (``near``) to one of the related set, or the
        set of records with one."""
        m = self.d.mark
        owned, params = self.d.owned(e)
        head = (
            f"SELECT {e}.{near} FROM relationships {e} WHERE "
            if self._sets
            else f"EXISTS (SELECT 1 FROM relationships {e} WHERE {e}.{near} = {alias}.rowid AND "
        )
        sql = (
            f"{head}{owned}{e}.scope_key = {m} AND {e}.{near}_kind = 'RECORD' AND {e}.{far}_kind = 'RECORD' "
            f"AND {e}.{far} IN (SELECT id FROM {related})"
        )
        params.append(self.scope_key)
        if type_ is not None:
            sql += f" AND {e}.type = {m}"
            params.append(type_)
        return Compiled(sql if self._sets else sql + ")", params)


def _conjuncts(node: Node) -> list[Node]:
    """The conditions of a top-level AND, nested ANDs flattened (as the planner flattens them)."""
    if isinstance(node, All):
        return [c for item in node.items for c in _conjuncts(item)]
    return [node]


def _on_columns(node: Node) -> bool:
    """True when the condition reads only the record's own columns ($id, $createdAt, $updatedAt)."""
    return isinstance(node, (Compare, Member, Exists, Component)) and node.name in PSEUDO_COLUMNS


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
            parts.append(
                f"(SELECT min(o.{column}) FROM record_values o WHERE o.record = {alias}.rowid "
                f"AND o.name = {dialect.mark}) {way} NULLS LAST"
            )
            params.append(order.name)
    parts.append(f"{alias}.created_at DESC, {alias}.rowid DESC")
    return Compiled(" ORDER BY " + ", ".join(parts), params)


def bounded(params: list[Any]) -> list[Any]:
    """``params``, unless one statement would bind more than the budget: a search that can never
    run answers 422, never the driver's failure (PostgreSQL's client refuses past 65,535 with no
    SQLSTATE, which reads as an unreachable server: a retryable 503)."""
    if len(params) > BUDGET.parameters:
        raise InvalidInputError(
            f"where: this search would bind {len(params):,} values in one statement; "
            f"a statement binds at most {BUDGET.parameters:,}",
            field="where",
        )
    return params


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
