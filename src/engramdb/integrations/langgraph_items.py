"""How a LangGraph item is a fact, and a LangGraph filter a structured search's conditions.

    namespace ("memories", "alice", "food")  ->  subjectKey "ns:memories/alice/food/"
    key "diet"                               ->  kind "key:diet"   (a longer key: "key#<sha256>")
    value {"text": "vegan"}                  ->  text {"v":{"text":"vegan"},"r":"<22 private-use characters>"}

Each label of the namespace is percent-encoded and ends with ``/``, so a namespace's subject is a
text prefix of exactly its own and its descendants' subjects (``ns:a/`` never starts
``ns:ab/``). The text is a JSON object: ``v`` the value, ``r`` a random revision written in
private-use characters (no two versions of an item have the same text, so a value put back is a
new version, never refused as one corrected away, while the words and the vector are the value's
alone), ``k`` the key where the kind holds its hash. The provenance says, from an item's
second version on, when it was created (``langgraph:created=<microseconds since the epoch>``: the
first version's record time is the creation). A version put with ``index=False`` has the
sourceEventId ``langgraph:unindexed`` (others ``langgraph``): a query's search lists it unranked.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import InvalidNamespaceError, Item, MatchCondition, SearchItem

from engramdb.contract.bounds import TEXT_CAPS, has_lone_surrogate
from engramdb.contract.canonical import canonical_json
from engramdb.models.memories import MemoryView

PREFIX = "ns:"
INDEXED = "langgraph"  # the sourceEventId of an item's versions (the search ranks them)
UNINDEXED = "langgraph:unindexed"  # of a version put with index=False (a search lists it unranked)
KIND = "key:"
HASHED_KIND = "key#"
_RANGES = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
Condition = dict[str, Any]


def subject(namespace: Sequence[str]) -> str:
    """The subject of a namespace (and the text prefix of its descendants' subjects)."""
    encoded = PREFIX + "".join(quote(label, safe="", errors="surrogatepass") + "/" for label in namespace)
    if len(encoded) > TEXT_CAPS["subjectKey"]:
        raise InvalidNamespaceError(
            f"namespace {tuple(namespace)!r} is {len(encoded)} characters as a subject; EngramDB's limit is "
            f"{TEXT_CAPS['subjectKey']}"
        )
    return encoded


def namespace_of(subject_key: str) -> tuple[str, ...]:
    """The namespace a subject names (its labels end with ``/``)."""
    return tuple(unquote(label, errors="surrogatepass") for label in subject_key[len(PREFIX) :].split("/")[:-1])


def kind(key: str) -> str:
    """The fact kind of a key: the key itself when a kind can hold it, else its hash."""
    if _plain(key):
        return KIND + key
    return HASHED_KIND + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:56]


def _plain(key: str) -> bool:
    return len(KIND) + len(key) <= TEXT_CAPS["kind"] and "\x00" not in key and not has_lone_surrogate(key)


def text(key: str, value: Mapping[str, Any]) -> str:
    """The text of a new version of an item: its value, and a revision mark no index reads."""
    parts = [f'"v":{canonical_json(dict(value))}', f'"r":"{_revision()}"']
    if not _plain(key):
        parts.append(f'"k":{canonical_json(key)}')
    written = "{" + ",".join(parts) + "}"
    if len(written) > TEXT_CAPS["text"]:
        raise ValueError(
            f"the value of {key!r} is {len(written)} characters as a fact; the limit is {TEXT_CAPS['text']}"
        )
    return written


def _revision() -> str:
    """64 random bits as 22 private-use characters (Unicode Co), which the embedders' tokenizers drop,
    the lexical arm's words leave out and canonical text leaves alone, yet which make the text, its
    factId and its value hash new. Not invisible format characters (as up to session 49): a value's
    hash leaves those out (none may pass a tombstone), which refused every value put back."""
    bits = secrets.randbits(66)
    return "".join(_PRIVATE[(bits >> (3 * i)) & 7] for i in range(22))


_PRIVATE = "".join(chr(0xE000 + i) for i in range(8))  # the Private Use Area


def provenance(created: int | None) -> str:
    """A version's provenance: the store, and from the second version on when the item was created."""
    return INDEXED if created is None else f"{INDEXED}:created={created}"


def created_micros(view: MemoryView) -> int:
    """When the item a version belongs to was created, in microseconds since the epoch."""
    stored = _created(view)
    return stored if stored is not None else _micros(_time(view.recorded_at))


def _created(view: MemoryView) -> int | None:
    stored = str(view.event.get("provenance", "")).partition(":created=")[2]
    return int(stored) if stored.isdigit() else None


def item(view: MemoryView) -> Item:
    """The LangGraph item a fact is."""
    found = search_item(view, None)
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def search_item(view: MemoryView, score: float | None) -> SearchItem:
    """The LangGraph item a fact is, as a search found it."""
    body = json.loads(str(view.event["text"]))
    key = body["k"] if "k" in body else str(view.event["kind"])[len(KIND) :]
    updated, created_at = _time(view.recorded_at), _created(view)
    created = _EPOCH + timedelta(microseconds=created_at) if created_at is not None else updated
    return SearchItem(namespace_of(str(view.event["subjectKey"])), key, body["v"], created, updated, score)


class Never(Exception):
    """A filter no item can meet (a NaN, an infinity, a NUL): the search finds nothing."""


def conditions(filter: Mapping[str, Any] | None) -> list[Condition]:
    """A LangGraph filter as a structured search's conditions on ``v`` (the value); raises
    ``Never`` for a filter no item can meet."""
    found: list[Condition] = []
    for field, expected in (filter or {}).items():
        _compare(["v", field], expected, found)
    return found


def _compare(path: list[str | int], expected: Any, found: list[Condition]) -> None:
    """LangGraph's ``_compare_values``: operators, a nested object field by field, a list element
    by element, else equality."""
    if isinstance(expected, Mapping) and any(str(k).startswith("$") for k in expected):
        for op, operand in expected.items():
            found.extend(_operator(path, op, operand))
    elif isinstance(expected, Mapping):
        found.append({"path": path, "op": "type", "value": "object"})
        for field, inner in expected.items():
            _compare([*path, field], inner, found)
    elif isinstance(expected, (list, tuple)):
        found.append({"path": path, "op": "length", "value": len(expected)})
        for at, inner in enumerate(expected):
            _compare([*path, at], inner, found)
    else:
        found.extend(_operator(path, "$eq", expected))


def _operator(path: list[str | int], op: str, operand: Any) -> list[Condition]:
    """One operator's conditions (none: every item meets it)."""
    if op in ("$eq", "$ne"):
        if _storable(operand):
            return [{"path": path, "op": op[1:], "value": operand}]
        if op == "$eq":  # no stored value is NaN, an infinity or holds a NUL: nothing equals it
            raise Never(op)
        return []
    if op not in _RANGES:
        raise ValueError(f"Unsupported operator: {op}")
    bound = float(operand)  # as LangGraph: float() or raise
    if math.isfinite(bound):
        return [{"path": path, "op": _RANGES[op], "value": bound}]
    if not math.isnan(bound) and (bound > 0) == (op in ("$lt", "$lte")):
        return [{"path": path, "op": "type", "value": "number"}]  # every number is below +inf, above -inf
    raise Never(op)


def _storable(value: Any) -> bool:
    """Whether a JSON text can carry ``value`` as it is (and PostgreSQL compare it)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, Mapping):
        return all(_storable(k) and _storable(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_storable(v) for v in value)
    return True


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's namespace match: a prefix or suffix, ``*`` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        namespace = namespace[len(namespace) - len(path) :]
    elif condition.match_type != "prefix":
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in zip(namespace, path, strict=False))


def fixed_prefix(conditions: Sequence[MatchCondition]) -> tuple[str, ...]:
    """The labels every matching namespace starts with (a prefix condition's, up to a ``*``)."""
    best: tuple[str, ...] = ()
    for condition in conditions:
        if condition.match_type == "prefix":
            labels = tuple(condition.path)
            fixed = labels[: labels.index("*")] if "*" in labels else labels
            best = fixed if len(fixed) > len(best) else best
    return best


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)
