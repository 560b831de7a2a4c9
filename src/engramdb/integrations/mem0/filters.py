"""Mem0's ``filters``: who (``user_id``, ``agent_id``, ``run_id``) and what (metadata, with Mem0's
operators ``eq``, ``ne``, ``in``, ``nin``, ``gt``, ``gte``, ``lt``, ``lte``, ``contains``,
``icontains``, the ``"*"`` wildcard, and ``AND``/``OR``/``NOT``), matched against a memory in
Mem0's shape."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engramdb.errors import InvalidInputError

ENTITIES = ("user_id", "agent_id", "run_id")
_PROMOTED = ("user_id", "agent_id", "run_id", "actor_id", "role")


class Mem0InputError(InvalidInputError, ValueError):
    """A call Mem0 refuses too (Mem0 raises ``ValueError``)."""


def entity_id(value: Any, name: str) -> str | None:
    """An entity id as Mem0 takes it: a string (an integer becomes one), trimmed, no whitespace inside."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or any(c.isspace() for c in text):
        raise Mem0InputError(f"Invalid {name}: it must be non-empty and contain no whitespace", field=name)
    return text


def entities(filters: Mapping[str, Any]) -> dict[str, str]:
    """The entity ids a filter names exactly (a ``"*"`` names every one)."""
    named = {k: filters[k] for k in ENTITIES if k in filters and filters[k] != "*"}
    return {k: v for k, v in ((k, entity_id(v, k)) for k, v in named.items()) if v is not None}


def matches(item: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """True when the memory meets every condition of ``filters``."""
    for key, wanted in filters.items():
        if key == "AND":
            if not all(matches(item, f) for f in wanted):
                return False
        elif key == "OR":
            if not any(matches(item, f) for f in wanted):
                return False
        elif key == "NOT":
            if any(matches(item, f) for f in wanted):
                return False
        elif key == "user_id" and wanted != "*" and item.get("user_id") is None:
            continue  # the scope already says whose it is (its raw id is stored nowhere)
        elif not _meets(_value(item, key), wanted):
            return False
    return True


def _value(item: Mapping[str, Any], key: str) -> Any:
    if key in _PROMOTED:
        return item.get(key)
    return (item.get("metadata") or {}).get(key)


def _meets(value: Any, wanted: Any) -> bool:
    if wanted == "*":
        return value is not None
    if not isinstance(wanted, Mapping):
        return bool(value == wanted)
    return all(_operator(op)(value, operand) for op, operand in wanted.items())


def _contains(value: Any, operand: Any) -> bool:
    return value is not None and operand in value


def _icontains(value: Any, operand: Any) -> bool:
    if isinstance(value, str):
        return str(operand).lower() in value.lower()
    return value is not None and any(str(operand).lower() == str(v).lower() for v in value)


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def check(value: Any, operand: Any) -> bool:
        try:
            return value is not None and compare(value, operand)
        except TypeError:
            return False

    return check


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda v, o: bool(v == o),
    "ne": lambda v, o: bool(v != o),
    "in": lambda v, o: v in o,
    "nin": lambda v, o: v not in o,
    "gt": _ordered(lambda v, o: bool(v > o)),
    "gte": _ordered(lambda v, o: bool(v >= o)),
    "lt": _ordered(lambda v, o: bool(v < o)),
    "lte": _ordered(lambda v, o: bool(v <= o)),
    "contains": _contains,
    "icontains": _icontains,
}


def _operator(name: str) -> Callable[[Any, Any], bool]:
    if name not in _OPERATORS:
        raise Mem0InputError(f"unknown filter operator {name!r}: one of {', '.join(_OPERATORS)}", field="filters")
    return _OPERATORS[name]
