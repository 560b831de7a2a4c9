"""A record's properties: what a name and a value may be, and how nested objects become records.

Properties are schema-free JSON under camelCase names: strings, numbers, booleans, date-times and
lists of them. A nested object (or a list of objects) is not a property: it becomes a child
record, labelled by its key (``DECISION``, or ``ownerInfo`` -> ``OWNER_INFO``) and linked to its
parent by ``HAS_<LABEL>``. Each scalar is kept beside the record as a typed value the
where-language can compare; date-times are kept in the canonical UTC form, so text order is time
order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engramdb import clock
from engramdb.contract.events import check_date_time, check_keepable
from engramdb.errors import InvalidInputError
from engramdb.storage.knowledge.port import Value

LABEL = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
PROPERTY = re.compile(r"[a-z][A-Za-z0-9_]{0,63}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_PROPERTIES = 256
MAX_STRING = 16_000
MAX_LIST = 1_000
MAX_DEPTH = 8
# One write holds the tenant's write lock from its first row to its last: every other write of the
# tenant waits. 10,000 records of 9 values held it for 12-14 s, while another key's fact write waited
# 11.9 s (session 46); 1,000 records take ~0.5 s, 10,000 values ~0.35 s (each value a row, 20-60 us).
MAX_RECORDS = 1_000  # in one write, children included
MAX_VALUES = 10_000  # typed values in one write or one record (a list's items count one each)
# A record's properties as stored (canonical JSON, UTF-8). Its values alone allowed ~160 MB, grown by
# PATCHes past the body limit; a PATCH then re-read and re-wrote it all under the write lock (8.7 s
# for 90 MB, while another key's write waited: a review), and every read answered it whole.
MAX_RECORD_BYTES = 1_000_000
# A relationship's properties as stored: they describe the link (a role, a weight, a date). Uncapped,
# one took 14 MB (under the body limit), and an export of three answered 14 MB (a review).
MAX_RELATIONSHIP_BYTES = 64_000


def check_stored(stored: str, limit: int, where: str, noun: str) -> None:
    """Refuse properties whose stored form (canonical JSON, UTF-8) passes ``limit`` bytes."""
    size = len(stored.encode())
    if size > limit:
        raise InvalidInputError(
            f"{where} holds {size:,} bytes of properties once stored; a {noun} takes at most {limit:,}", field=where
        )


@dataclass
class Draft:
    """A record about to be written, with the children nested under it."""

    label: str
    properties: dict[str, Any]
    path: str  # where it sits in the request, for error messages: data.TASK[2]
    children: list[tuple[str, Draft]] = field(default_factory=list)  # (relationship type, child)

    def count(self) -> int:
        """This record and all below it."""
        return 1 + sum(child.count() for _, child in self.children)

    def values(self) -> int:
        """The typed values of this record and all below it (a list's items count one each)."""
        return value_count(self.properties) + sum(child.values() for _, child in self.children)


def value_count(properties: Mapping[str, Any]) -> int:
    """The typed values ``properties`` hold once stored (a list's items count one each)."""
    return sum(len(v) if isinstance(v, list) else 1 for v in properties.values())


def check_property_count(count: int, where: str, whose: str | None = None) -> None:
    """Refuse more than ``MAX_PROPERTIES`` properties at ``where`` (``whose``: the record they would
    be merged into, when not ``where``'s own)."""
    if count > MAX_PROPERTIES:
        held = f"would give {whose}" if whose else "has"
        raise InvalidInputError(f"{where} {held} {count} properties; the limit is {MAX_PROPERTIES}", field=where)


def check_label(label: str, field_name: str = "label") -> str:
    if not isinstance(label, str) or not LABEL.fullmatch(label):
        raise InvalidInputError(
            f"{field_name} must be UPPER_CASE (A-Z, 0-9, _; 1-64 characters), e.g. DECISION; got {label!r}",
            field=field_name,
        )
    return label


def check_property(name: str, field_name: str) -> str:
    if not PROPERTY.fullmatch(name):
        raise InvalidInputError(
            f"{field_name}: property names are camelCase (a-z first, then letters, digits, _; "
            f"at most 64), got {name!r}",
            field=field_name,
        )
    return name


def label_of_key(key: str) -> str:
    """The label of the records nested under ``key``: itself if UPPER_CASE, else UPPER_SNAKE."""
    return key if LABEL.fullmatch(key) else re.sub(r"(?<!^)(?=[A-Z])", "_", key).upper()


def draft(label: str, data: Any, path: str = "data", depth: int = 0) -> Draft:
    """Validate ``data`` as a record of ``label``; nested objects become its children."""
    check_label(label)
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{path} must be a JSON object of properties", field=path)
    if depth > MAX_DEPTH:
        raise InvalidInputError(f"{path}: records nest at most {MAX_DEPTH} levels", field=path)
    record = Draft(label, {}, path)
    for key, value in data.items():
        where = f"{path}.{key}"
        if _is_child(value):
            child_label = label_of_key(key)
            check_label(child_label, where)
            items = value if isinstance(value, list) else [value]
            record.children += [
                (f"HAS_{child_label}", draft(child_label, item, f"{where}[{i}]", depth + 1))
                for i, item in enumerate(items)
            ]
            continue
        check_property(key, where)
        if value is None:
            continue  # absent (a null never becomes a value)
        value = storable(value, where)
        values(key, value, where)  # validates
        record.properties[key] = value
    check_property_count(len(record.properties), path)
    return record


def storable(value: Any, where: str) -> Any:
    """``value`` with NULs taken out of its strings, as memory text has them (PostgreSQL text cannot
    hold one); a lone surrogate, which is no Unicode text and no store can encode, is refused."""
    if isinstance(value, list):
        return [storable(item, where) for item in value]
    if not isinstance(value, str):
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"{where} holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text", field=where
        ) from None
    return value.replace("\x00", "")


def _is_child(value: Any) -> bool:
    if isinstance(value, Mapping):
        return True
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def values(name: str, value: Any, where: str | None = None) -> list[Value]:
    """The typed values of one property (one per list element); InvalidInputError if it has none."""
    where = where or name
    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and len(value) > MAX_LIST:
        raise InvalidInputError(f"{where} holds {len(value)} items; the limit is {MAX_LIST}", field=where)
    return [scalar(name, item, where) for item in items]


def scalar(name: str, value: Any, where: str) -> Value:
    """One typed value: a string, a number, a boolean or a date-time."""
    if isinstance(value, bool):
        return Value(name, "boolean", number=1.0 if value else 0.0)
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")) or abs(value) > 2**53:
            raise InvalidInputError(f"{where} must be a finite number of at most 2^53", field=where)
        return Value(name, "number", number=float(value))
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise InvalidInputError(f"{where} is {len(value)} characters; the limit is {MAX_STRING}", field=where)
        moment = as_datetime(value)
        return Value(name, "datetime", text=moment) if moment else Value(name, "string", text=value)
    kind = "a list in a list" if isinstance(value, list) else type(value).__name__
    raise InvalidInputError(
        f"{where} must be a string, number, boolean or date-time (or a list of them), not {kind}", field=where
    )


def as_datetime(text: str) -> str | None:
    """The canonical form of an RFC 3339 date-time or a YYYY-MM-DD date, else None."""
    try:
        if _DATE.fullmatch(text):
            check_date_time(f"{text}T00:00:00Z")
            return clock.normalize(f"{text}T00:00:00Z")
        check_keepable(check_date_time(text))
        return clock.normalize(text)
    except ValueError:
        return None
