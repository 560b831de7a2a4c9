"""The where-language: a subset of RushDB's SearchQuery, parsed into a tree the stores compile.

    {"status": "open",                                   equality (any element of a list)
     "priority": {"$gte": 2, "$lt": 5},                  comparisons (numbers, date-times, text)
     "title": {"$contains": "billing"},                  $contains / $startsWith / $endsWith
     "dueDate": {"$year": 2026, "$month": {"$lte": 6}},  date-time components
     "assignee": {"$in": ["Alice", "Bob"]},              $in / $nin, $ne, $exists
     "$or": [{...}, {...}], "$not": {...},               $and / $or / $not
     "PROJECT": {"$relation": {"type": "HAS_TASK", "direction": "in"}, "name": "billing"}}

An UPPER_CASE key is a related record: the root must have one that matches (``$not`` over it:
none may). ``$relation`` names the relationship's type and direction (``out`` from the record
the condition is on, ``in`` towards it; default any type, either way). ``$id``, ``$createdAt``
and ``$updatedAt`` are the record's own id and record times. Every error is a 422 naming the
place in the query (``where.PROJECT.name.$foo``); so is a where past the budget (``BUDGET``,
storage/knowledge/port.py: every key counts, the $in/$nin values of all lists together, objects
nested), counted as it is parsed, before a statement runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engramdb.core.knowledge.properties import LABEL, PROPERTY, as_datetime, scalar, storable
from engramdb.errors import InvalidInputError
from engramdb.storage.knowledge.port import (
    BUDGET,
    All,
    AnyOf,
    Compare,
    Component,
    Direction,
    Exists,
    Member,
    Node,
    Not,
    Related,
    Value,
)

COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
TEXT_MATCH = ("$contains", "$startsWith", "$endsWith")
COMPONENTS = {
    "$year": (1, 4),
    "$month": (6, 2),
    "$day": (9, 2),
    "$hour": (12, 2),
    "$minute": (15, 2),
    "$second": (18, 2),
}  # (start, length) in the canonical text
PSEUDO = {"$id": "record_id", "$createdAt": "created_at", "$updatedAt": "updated_at"}


class _Spent:
    """What the where parsed so far has taken of the budget (``BUDGET``, storage/knowledge/port.py)."""

    def __init__(self) -> None:
        self.keys = 0
        self.values = 0

    def key(self, path: str) -> None:
        self.keys += 1
        if self.keys > BUDGET.keys:
            raise InvalidInputError(
                f"{path}: a where holds at most {BUDGET.keys:,} keys (every key of every object counts, "
                "operators and $relation included); this is one more",
                field=path,
            )

    def list_values(self, count: int, path: str) -> None:
        self.values += count
        if self.values > BUDGET.values:
            raise InvalidInputError(
                f"{path}: a where holds at most {BUDGET.values:,} $in/$nin values in all its lists; "
                f"this list brings it to {self.values:,}",
                field=path,
            )


def parse(where: Any, path: str = "where") -> Node:
    """The tree of a where object; InvalidInputError naming the place of the first mistake, or of
    the first key, value or level past the budget."""
    return _where(where, path, 0, 1, _Spent())


def _where(where: Any, path: str, depth: int, nesting: int, spent: _Spent) -> Node:
    if not isinstance(where, Mapping):
        raise InvalidInputError(f"{path} must be a JSON object of conditions", field=path)
    if nesting > BUDGET.nesting:
        raise InvalidInputError(
            f"{path}: where objects nest at most {BUDGET.nesting:,} deep ($and, $or, $not and related labels)",
            field=path,
        )
    items = []
    for key, value in where.items():
        spent.key(f"{path}.{key}")
        items.append(_entry(key, value, f"{path}.{key}", depth, nesting, spent))
    return items[0] if len(items) == 1 else All(tuple(items))


def _entry(key: str, value: Any, path: str, depth: int, nesting: int, spent: _Spent) -> Node:
    if key in ("$and", "$or"):
        if not isinstance(value, list) or not value:
            raise InvalidInputError(f"{path} must be a non-empty list of where objects", field=path)
        parts = tuple(_inner(v, f"{path}[{i}]", depth, nesting, spent) for i, v in enumerate(value))
        return All(parts) if key == "$and" else AnyOf(parts)
    if key == "$not":
        return Not(_inner(value, path, depth, nesting, spent))
    if LABEL.fullmatch(key):
        return _related(key, value, path, depth, nesting, spent)
    if key in PSEUDO or PROPERTY.fullmatch(key):
        return _condition(key, value, path, spent)
    raise InvalidInputError(
        f"{path}: {key!r} is neither a property (camelCase), a label (UPPER_CASE), "
        "$id/$createdAt/$updatedAt nor $and/$or/$not",
        field=path,
    )


def _inner(where: Any, path: str, depth: int, nesting: int, spent: _Spent) -> Node:
    """A where inside $and, $or or $not: one level deeper, and holding at least one condition (an
    empty one would cost a statement a term while taking nothing of the budget)."""
    node = _where(where, path, depth, nesting + 1, spent)
    if not where:
        raise InvalidInputError(f"{path} holds no condition", field=path)
    return node


def _related(label: str, value: Any, path: str, depth: int, nesting: int, spent: _Spent) -> Node:
    if depth + 1 > BUDGET.related:
        raise InvalidInputError(f"{path}: related labels nest at most {BUDGET.related:,} deep", field=path)
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{path} must be a JSON object (conditions on the related {label})", field=path)
    relation = value.get("$relation")
    rest = {k: v for k, v in value.items() if k != "$relation"}
    kind, direction = _relation(relation, f"{path}.$relation", spent) if "$relation" in value else (None, "any")
    inner = _where(rest, path, depth + 1, nesting + 1, spent) if rest else All(())
    return Related(label, kind, direction, inner)


def _relation(relation: Any, path: str, spent: _Spent) -> tuple[str | None, Direction]:
    spent.key(path)
    if relation is None:
        return None, "any"
    if isinstance(relation, str):
        relation = {"type": relation}
    if not isinstance(relation, Mapping) or set(relation) - {"type", "direction"}:
        raise InvalidInputError(f"{path} is a type (UPPER_CASE) or {{type, direction}}", field=path)
    for key in relation:
        spent.key(f"{path}.{key}")
    kind = relation.get("type")
    if kind is not None and (not isinstance(kind, str) or not LABEL.fullmatch(kind)):
        raise InvalidInputError(f"{path}.type must be UPPER_CASE, e.g. HAS_TASK", field=f"{path}.type")
    direction = relation.get("direction", "any")
    if direction not in ("out", "in", "any"):
        raise InvalidInputError(f"{path}.direction is out, in or any", field=f"{path}.direction")
    return kind, direction


def _condition(name: str, value: Any, path: str, spent: _Spent) -> Node:
    if not isinstance(value, Mapping):
        return Compare(name, "$eq", _operand(name, "$eq", value, path))
    if not value:
        raise InvalidInputError(f"{path} holds no operator", field=path)
    parts = []
    for op, operand in value.items():
        spent.key(f"{path}.{op}")
        parts.append(_operator(name, op, operand, f"{path}.{op}", spent))
    return parts[0] if len(parts) == 1 else All(tuple(parts))


def _operator(name: str, op: str, operand: Any, path: str, spent: _Spent) -> Node:
    if op in COMPARISONS or op in TEXT_MATCH:
        return Compare(name, op, _operand(name, op, operand, path))
    if op in ("$in", "$nin"):
        if not isinstance(operand, list) or not operand:
            raise InvalidInputError(f"{path} takes a non-empty list of values", field=path)
        spent.list_values(len(operand), path)
        values = tuple(_operand(name, "$eq", v, f"{path}[{i}]") for i, v in enumerate(operand))
        return Member(name, values, negated=op == "$nin")
    if op == "$exists":
        if not isinstance(operand, bool):
            raise InvalidInputError(f"{path} takes true or false", field=path)
        return Exists(name, operand)
    if op in COMPONENTS:
        return _component(name, op, operand, path, spent)
    known = ", ".join((*COMPARISONS, "$in", "$nin", "$exists", *TEXT_MATCH, *COMPONENTS))
    raise InvalidInputError(f"{path}: unknown operator {op!r} (known: {known})", field=path)


def _component(name: str, part: str, operand: Any, path: str, spent: _Spent) -> Node:
    if isinstance(operand, Mapping):
        for op in operand:
            spent.key(f"{path}.{op}")
        parts = [_component_compare(name, part, op, number, f"{path}.{op}") for op, number in operand.items()]
        if not parts:
            raise InvalidInputError(f"{path} holds no operator", field=path)
        return parts[0] if len(parts) == 1 else All(tuple(parts))
    return _component_compare(name, part, "$eq", operand, path)


def _component_compare(name: str, part: str, op: str, number: Any, path: str) -> Component:
    if op not in COMPARISONS:
        raise InvalidInputError(f"{path}: a date-time part compares with {', '.join(COMPARISONS)}", field=path)
    if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= 9999:
        raise InvalidInputError(f"{path} takes a whole number from 0 to 9999", field=path)
    return Component(name, part[1:], op, number)


def _operand(name: str, op: str, value: Any, path: str) -> Value:
    if isinstance(value, (list, Mapping)) or value is None:
        raise InvalidInputError(
            f"{path} takes one string, number, boolean or date-time"
            + (" (use $exists for absence)" if value is None else ""),
            field=path,
        )
    if op in TEXT_MATCH and not isinstance(value, str):
        raise InvalidInputError(f"{path} takes a string", field=path)
    value = storable(value, path)  # compared as stored: without NULs
    if name in PSEUDO:
        return _pseudo(name, value, path)
    typed = scalar(name, value, path)
    if op in ("$gt", "$gte", "$lt", "$lte") and typed.kind == "boolean":
        raise InvalidInputError(f"{path} compares numbers, date-times or text, not booleans", field=path)
    if op in TEXT_MATCH:
        return Value(name, "string", text=value)  # text match reads the text as written
    return typed


def _pseudo(name: str, value: Any, path: str) -> Value:
    if not isinstance(value, str):
        raise InvalidInputError(f"{path} takes a string", field=path)
    if name == "$id":
        return Value(name, "string", text=value)
    moment = as_datetime(value)
    if moment is None:
        raise InvalidInputError(f"{path} takes a date-time such as 2026-08-18T00:00:00Z", field=path)
    return Value(name, "datetime", text=moment)
