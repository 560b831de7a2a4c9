"""The statements of a structured fact search, for either backend.

A search's facts come from the current facts' index alone (scope, record time, subject, validity,
source): a page newest first, or every rowid of a scope at once. Conditions are read only for the
rows core asks about, each found by its key: SQLite through ``json_type`` and ``json_extract`` on
the text (a path's keys quoted as the canonical JSON writes them), PostgreSQL through the text cast
to ``jsonb`` once per row (only where it casts: any other text never matches a condition). Every
condition is false, not NULL, where its path leads nowhere, so ``ne`` keeps a fact that lacks the
field, as LangGraph's filters do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engramdb.contract.canonical import canonical_json
from engramdb.storage.fact_search.port import ANY_SOURCE, FieldCondition, ScopeMatch, Sources

_SQLITE_TYPES = {
    "object": ("object",),
    "array": ("array",),
    "string": ("text",),
    "number": ("integer", "real"),
    "boolean": ("true", "false"),
    "null": ("null",),
}
_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_CURRENT = "m.source = 'MEMORY_FACT' AND m.status = 'active' AND (m.valid_until IS NULL OR m.valid_until > {mark})"


@dataclass(frozen=True)
class Dialect:
    """The backend a statement is for: its placeholder, and PostgreSQL's tenant."""

    mark: str  # "?" (SQLite) or "%s" (PostgreSQL)
    tenant: str | None = None  # PostgreSQL: every row carries its tenant

    @property
    def postgres(self) -> bool:
        return self.tenant is not None


def current_facts(
    d: Dialect, scopes: ScopeMatch, prefix: str, now: str, sources: Sources, page: tuple[int, int]
) -> tuple[str, list[Any]]:
    """``SELECT rowid``: a page (offset, limit) of the current facts under ``prefix`` from ``sources``,
    newest first (read from the index alone)."""
    found, params = _current(d, scopes, prefix, now, sources)
    sql = f"SELECT m.rowid FROM memories m{_indexed(d, scopes)} WHERE {found}"
    sql += f" ORDER BY m.recorded_at DESC, m.rowid DESC LIMIT {d.mark} OFFSET {d.mark}"
    return sql, [*params, page[1], page[0]]


def grouped(d: Dialect, scopes: ScopeMatch, prefix: str, now: str, sources: Sources) -> tuple[str, list[Any]]:
    """``SELECT scope_key, rowids, until``: every current fact under ``prefix`` from ``sources``, each
    scope's rowids as one value (SQLite: a comma-separated text, PostgreSQL: an array), not a row
    each, and the first of their validUntil (NULL: none of them ends)."""
    found, params = _current(d, scopes, prefix, now, sources)
    rowids = "array_agg(m.rowid)" if d.postgres else "group_concat(m.rowid)"
    sql = f"SELECT m.scope_key, {rowids}, min(m.valid_until) FROM memories m{_indexed(d, scopes)} WHERE {found}"
    sql += " GROUP BY m.scope_key"
    return sql, params


def count(d: Dialect, scopes: ScopeMatch, prefix: str, now: str, sources: Sources) -> tuple[str, list[Any]]:
    """``SELECT count(*)`` of the current facts under ``prefix`` from ``sources``."""
    found, params = _current(d, scopes, prefix, now, sources)
    return f"SELECT count(*) FROM memories m{_indexed(d, scopes)} WHERE {found}", params


def meeting(d: Dialect, rowids: Sequence[int], where: Sequence[FieldCondition]) -> tuple[str, list[Any]]:
    """``SELECT rowid``: those of ``rowids`` whose text meets every condition (each row found by its
    key; PostgreSQL parses each text once, and only where it is JSON)."""
    conditions, params = (_postgres_where if d.postgres else _sqlite_where)(where)
    rows, keyed, keys = _by_key(d, rowids)
    parsed = (
        " CROSS JOIN LATERAL (SELECT CASE WHEN pg_input_is_valid(m.text, 'jsonb') THEN m.text::jsonb END AS doc"
        " OFFSET 0) j"  # OFFSET 0: parsed once per row, not once per condition that reads it
        if d.postgres
        else ""
    )
    return f"SELECT m.rowid FROM {rows}{parsed} WHERE {keyed}{conditions}", [*keys, *params]


def newest_first(d: Dialect, rowids: Sequence[int], page: tuple[int, int]) -> tuple[str, list[Any]]:
    """``SELECT rowid``: a page (offset, limit) of ``rowids``, newest first (record time, then write
    order, as ``current_facts``), each row found by its key."""
    rows, keyed, keys = _by_key(d, rowids)
    order = f" ORDER BY m.recorded_at DESC, m.rowid DESC LIMIT {d.mark} OFFSET {d.mark}"
    return f"SELECT m.rowid FROM {rows} WHERE {keyed}{order}", [*keys, page[1], page[0]]


def texts(d: Dialect, rowids: Sequence[int]) -> tuple[str, list[Any]]:
    """``SELECT rowid, text`` of those of ``rowids`` that exist, each found by its key."""
    rows, keyed, keys = _by_key(d, rowids)
    return f"SELECT m.rowid, m.text FROM {rows} WHERE {keyed}", keys


def _by_key(d: Dialect, rowids: Sequence[int]) -> tuple[str, str, list[Any]]:
    """The rows ``rowids`` name, each found by its key: (FROM, WHERE, parameters). On SQLite the
    rowids go as one JSON array: one statement for any count (no limit of bound parameters), and
    never a scan of the table."""
    if d.postgres:
        return "memories m", "m.tenant = %s AND m.rowid = ANY(%s)", [d.tenant, list(rowids)]
    listed = "[" + ",".join(map(str, rowids)) + "]"
    return "json_each(?) AS ids CROSS JOIN memories m ON m.rowid = ids.value", "1 = 1", [listed]


def subjects(
    d: Dialect, scopes: ScopeMatch, prefix: str, after: str | None, now: str, limit: int
) -> tuple[str, list[Any]]:
    """``SELECT DISTINCT subject_key`` of current facts under ``prefix``, in code point order."""
    found, params = _current(d, scopes, prefix, now, ANY_SOURCE)
    column = 'm.subject_key COLLATE "C"' if d.postgres else "m.subject_key"
    if after is not None:
        found += f" AND {column} > {d.mark}"
        params.append(after)
    sql = f"SELECT DISTINCT {column} FROM memories m{_indexed(d, scopes)} WHERE {found} ORDER BY 1 LIMIT {d.mark}"
    return sql, [*params, limit]


def _indexed(d: Dialect, scopes: ScopeMatch) -> str:
    """SQLite's planner, given the statistics, prefers the subject index and reads every row it
    finds (ten thousand, for a page of ten); the current facts' own index answers from itself,
    newest first, and a page stops once it is full. PostgreSQL chooses it by itself."""
    return " INDEXED BY memories_current_facts" if not d.postgres and scopes.scope_key is not None else ""


def _current(d: Dialect, scopes: ScopeMatch, prefix: str, now: str, sources: Sources) -> tuple[str, list[Any]]:
    """The conjuncts every search starts from: tenant, scopes, current facts, the subject prefix and
    the sources (all of them columns of the current facts' index)."""
    parts: list[str] = []
    params: list[Any] = []
    if d.tenant is not None:
        parts.append(f"m.tenant = {d.mark}")
        params.append(d.tenant)
    if scopes.scope_key is not None:
        parts.append(f"m.scope_key = {d.mark}")
        params.append(scopes.scope_key)
    if scopes.columns:  # the scopes by their names (indexed by agent and profile), not every fact's columns:
        # a host key's search read every current fact of the tenant (2-4 s with 1,000,000 memories)
        named = [f"s.{column} = {d.mark}" for column, _ in scopes.columns]
        if d.tenant is not None:
            named.insert(0, f"s.tenant = {d.mark}")
            params.append(d.tenant)
        parts.append(f"m.scope_key IN (SELECT s.scope_key FROM scopes s WHERE {' AND '.join(named)})")
        params += [value for _, value in scopes.columns]
    parts.append(_CURRENT.format(mark=d.mark))
    params.append(now)
    # A range over the index's subjects in byte (code point) order: every text that starts with the
    # prefix, and no other (PostgreSQL's index and comparisons collate "C" for it).
    subject = 'm.subject_key COLLATE "C"' if d.postgres else "m.subject_key"
    parts.append(f"{subject} >= {d.mark}")
    params.append(prefix)
    bound = _past_prefix(prefix)
    if bound is not None:
        parts.append(f"{subject} < {d.mark}")
        params.append(bound)
    if sources.only is not None:
        parts.append(f"m.source_event_id IN ({', '.join([d.mark] * len(sources.only)) or 'NULL'})")
        params += list(sources.only)
    if sources.without:
        marks = ", ".join([d.mark] * len(sources.without))
        parts.append(f"(m.source_event_id IS NULL OR m.source_event_id NOT IN ({marks}))")
        params += list(sources.without)
    return " AND ".join(parts), params


def _past_prefix(prefix: str) -> str | None:
    """The least text above every text that starts with ``prefix`` (None: there is none)."""
    for at in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[at]) + 1
        if code == 0xD800:  # surrogates are no characters: the next one is U+E000
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[:at] + chr(code)
    return None


def _sqlite_where(where: Sequence[FieldCondition]) -> tuple[str, list[Any]]:
    parts, params = [], []
    for condition in where:
        sql, more = _sqlite_condition(condition)
        parts.append(sql)
        params += more
    # CASE, not AND: SQLite may evaluate an AND's terms in any order, and json_type fails on non-JSON.
    # The conditions come first: most rows fail one, and each term parses the text again.
    body = " AND ".join([*parts, "json_type(m.text) = 'object'"])
    return f" AND CASE WHEN json_valid(m.text) THEN ({body}) ELSE 0 END", params


def _sqlite_path(path: Sequence[str | int]) -> str:
    # A quoted label matches the key as the JSON text writes it (escapes and all); core refuses
    # keys holding a double quote, which SQLite's path syntax cannot quote.
    steps = (f"[{p}]" if isinstance(p, int) else '."' + json.dumps(p, ensure_ascii=False)[1:-1] + '"' for p in path)
    return "$" + "".join(steps)


def _sqlite_condition(c: FieldCondition) -> tuple[str, list[Any]]:
    path = _sqlite_path(c.path)
    kind = "json_type(m.text, ?)"
    if c.op == "type":
        types = _SQLITE_TYPES[str(c.value)]
        return f"coalesce({kind} IN ({', '.join(repr(t) for t in types)}), 0)", [path]
    if c.op == "length":
        return f"coalesce({kind} = 'array' AND json_array_length(m.text, ?) = ?, 0)", [path, path, c.value]
    if c.op in _COMPARE:
        number = f"coalesce(json_extract(m.text, ?) {_COMPARE[c.op]} ? AND {kind} IN ('integer', 'real'), 0)"
        return number, [path, bound_number(c.value), path]
    if c.value is None:
        equal, params = f"coalesce({kind}, 'null') = 'null'", [path]
    else:
        equal, params = _sqlite_equal(c.path, c.value)
    return (f"NOT {equal}" if c.op == "ne" else equal), params


def _sqlite_equal(steps: Sequence[str | int], operand: Any) -> tuple[str, list[Any]]:
    """The value at ``steps`` is the JSON ``operand``: objects key by key (any key order), arrays
    element by element, numbers by value."""
    path = _sqlite_path(steps)
    kind = "json_type(m.text, ?)"
    if operand is None:
        return f"coalesce({kind} = 'null', 0)", [path]
    if isinstance(operand, bool):
        return f"coalesce({kind} = ?, 0)", [path, "true" if operand else "false"]
    if isinstance(operand, (int, float)):
        return f"coalesce({kind} IN ('integer', 'real') AND json_extract(m.text, ?) = ?, 0)", [
            path,
            path,
            bound_number(operand),
        ]
    if isinstance(operand, str):
        return f"coalesce({kind} = 'text' AND json_extract(m.text, ?) = ?, 0)", [path, path, operand]
    if isinstance(operand, dict):
        head = f"coalesce({kind} = 'object' AND (SELECT count(*) FROM json_each(m.text, ?)) = ?, 0)"
        parts = [(head, [path, path, len(operand)])]
        parts += [_sqlite_equal([*steps, key], value) for key, value in operand.items()]
    else:
        parts = [(f"coalesce({kind} = 'array' AND json_array_length(m.text, ?) = ?, 0)", [path, path, len(operand)])]
        parts += [_sqlite_equal([*steps, i], value) for i, value in enumerate(operand)]
    return "(" + " AND ".join(sql for sql, _ in parts) + ")", [p for _, params in parts for p in params]


def _postgres_where(where: Sequence[FieldCondition]) -> tuple[str, list[Any]]:
    parts, params = ["jsonb_typeof(j.doc) = 'object'"], []
    for condition in where:
        sql, more = _postgres_condition(condition)
        parts.append(sql)
        params += more
    return " AND " + " AND ".join(parts), params


def _postgres_condition(c: FieldCondition) -> tuple[str, list[Any]]:
    at, steps = _postgres_path(c.path)
    if c.op == "type":
        return f"coalesce(jsonb_typeof({at}) = %s, false)", [*steps, c.value]
    if c.op == "length":
        length = f"coalesce(jsonb_typeof({at}) = 'array' AND jsonb_array_length({at}) = %s, false)"
        return length, [*steps, *steps, c.value]
    if c.op in _COMPARE:
        compare = f"CASE WHEN jsonb_typeof({at}) = 'number' THEN {at}::numeric {_COMPARE[c.op]} %s::numeric END"
        return f"coalesce({compare}, false)", [*steps, *steps, repr(bound_number(c.value))]
    params: list[Any]
    if c.value is None:
        equal, params = f"coalesce(jsonb_typeof({at}), 'null') = 'null'", steps
    else:
        equal, params = f"coalesce({at} = %s::jsonb, false)", [*steps, canonical_json(c.value)]
    return (f"NOT {equal}" if c.op == "ne" else equal), params


def _postgres_path(path: Sequence[str | int]) -> tuple[str, list[Any]]:
    """The value at ``path``, as SQLite's path reads it: an integer step is an array's index, a text
    step an object's key. ``#>`` takes a text of digits as an index too (and an integer step as a
    key of an object), so each such step first checks what it steps into."""
    texts = [str(step) for step in path]
    guards, params = [], []
    for at, step in enumerate(path):
        if isinstance(step, int) or _digits(step):
            guards.append(f"jsonb_typeof(j.doc #> %s::text[]) = '{'array' if isinstance(step, int) else 'object'}'")
            params.append(texts[:at])
    if not guards:
        return "(j.doc #> %s::text[])", [texts]
    return f"(CASE WHEN {' AND '.join(guards)} THEN j.doc #> %s::text[] END)", [*params, texts]


def _digits(step: str) -> bool:
    try:
        int(step)
    except ValueError:
        return False
    return True


def bound_number(value: Any) -> int | float:
    """A number as the drivers bind it: an integer past 64 bits as a float (JSON has no limit)."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return float(value)
