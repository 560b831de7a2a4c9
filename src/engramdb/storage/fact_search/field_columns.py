"""The values at a path of a scope's facts' JSON, held as columns beside the scope's copy, so a
search's conditions are read with numpy instead of parsing every fact's text on every search.

A fact's text never changes once written (a new version is a new row), so a value read once holds
for as long as the copy's rows do (an erasure, or a row out of id order, makes a new copy and new
columns with it). A column is filled for the rows a search asks about, the first time it asks:
their texts are read by key and each is parsed once for every path the search names. The
conditions mean what ``sql.py``'s statements mean (``port.FieldCondition``): a text that is not a
JSON object meets none, a missing value is ``null`` to ``eq``, numbers compare by value (exactly,
past 2**53 too) and never as booleans, objects and arrays by their canonical JSON.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

from engramdb.contract.canonical import canonical_json
from engramdb.storage.fact_search.port import FieldCondition
from engramdb.storage.fact_search.sql import bound_number

Path = tuple[str | int, ...]
Texts = Callable[[Sequence[int]], Iterable[tuple[int, str]]]  # rowids -> (rowid, text) of those that exist

# What a column holds at a row: its kind, then a number, a code (canonical JSON) or a length.
# BY_SQL: the row's text is one the backends may read otherwise than Python's parser (below), so the
# SQL statements decide for it.
UNREAD, BY_SQL, NOT_OBJECT, MISSING, NULL, FALSE, TRUE, NUMBER, STRING, OBJECT, ARRAY = range(11)
_TYPE_KINDS = {
    "object": (OBJECT,),
    "array": (ARRAY,),
    "string": (STRING,),
    "number": (NUMBER,),
    "boolean": (FALSE, TRUE),
    "null": (NULL,),
}
_COMPARE = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le, "eq": operator.eq}
_EXACT = 2.0**53  # past this a float64 no longer tells every integer apart
_ABSENT = object()  # the path leads nowhere
_NOT_OBJECT = object()  # the text is no JSON object
_BY_SQL = object()  # the text is one SQL reads its own way
_CHUNK = 10_000  # texts read at once
_DEPTH = 200  # deeper texts are SQL's to read: Python's parser and canonical JSON recurse
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
# PostgreSQL's jsonb refuses a NUL and a lone surrogate that Python's parser takes.
_REFUSED_ESCAPES = re.compile(
    r"\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class Column:
    """One path's value at each of a copy's positions (``UNREAD`` until a search asks)."""

    def __init__(self) -> None:
        self.kind = np.zeros(0, dtype=np.int8)
        self.number = np.zeros(0, dtype=np.float64)
        self.code = np.zeros(0, dtype=np.int32)  # strings, objects, arrays: their canonical JSON's code
        self.length = np.zeros(0, dtype=np.int32)  # arrays: how many elements
        self.big: dict[int, int] = {}  # integers a float64 cannot hold exactly, by position
        self.codes: dict[str, int] = {}
        self._code_bytes = 0  # what the codes' texts hold (a path to a whole object holds every text)
        self.nbytes = 0

    def grow(self, size: int) -> None:
        if size <= len(self.kind):
            return
        capacity = max(64, 2 * len(self.kind), size)

        def grown(array: np.ndarray, fill: float) -> np.ndarray:
            bigger = np.full(capacity, fill, dtype=array.dtype)
            bigger[: len(array)] = array
            return bigger

        self.kind = grown(self.kind, UNREAD)
        self.number, self.code, self.length = grown(self.number, np.nan), grown(self.code, -1), grown(self.length, -1)
        self._measure()

    def put(self, position: int, value: Any) -> None:
        """Hold ``value`` (the JSON value at the path, ``_ABSENT``, or the document not an object)."""
        kind = _kind(value)
        self.kind[position] = kind
        if kind == NUMBER:
            if isinstance(value, int) and abs(value) >= _EXACT:
                self.big[position] = value
            self.number[position] = _float(value)
        elif kind in (STRING, OBJECT, ARRAY):
            text = canonical_json(_normal(value))
            code = self.codes.get(text)
            if code is None:
                code = self.codes[text] = len(self.codes)
                self._code_bytes += 100 + len(text)
            self.code[position] = code
            if kind == ARRAY:
                self.length[position] = len(value)

    def meets(self, positions: np.ndarray, condition: FieldCondition) -> np.ndarray:
        """Which of ``positions`` (all read) meet ``condition``."""
        kind = self.kind[positions]
        op, value = condition.op, condition.value
        met: np.ndarray
        if op == "type":
            met = np.isin(kind, _TYPE_KINDS[str(value)])
        elif op == "length":
            met = (kind == ARRAY) & (self.length[positions] == value)
        elif op in _COMPARE and op != "eq":
            met = self._compare(positions, kind, op, value)
        else:
            met = self._equal(positions, kind, value)
            if op == "ne":
                met = ~met
        held: np.ndarray = met & (kind >= MISSING)  # unread (the row is gone), SQL's or no object: not met
        return held

    def _equal(self, positions: np.ndarray, kind: np.ndarray, value: Any) -> np.ndarray:
        if value is None:
            return np.isin(kind, (MISSING, NULL))
        if isinstance(value, bool):
            boolean: np.ndarray = kind == (TRUE if value else FALSE)
            return boolean
        if isinstance(value, (int, float)):
            return self._compare(positions, kind, "eq", value)
        code = self.codes.get(canonical_json(_normal(value)))
        return self.code[positions] == code if code is not None else np.zeros(len(positions), dtype=bool)

    def _compare(self, positions: np.ndarray, kind: np.ndarray, op: str, operand: int | float) -> np.ndarray:
        value = bound_number(operand)  # as the statements bind it: an integer past 64 bits as a float
        numbers, bound = self.number[positions], _float(value)
        with np.errstate(invalid="ignore"):
            met: np.ndarray = (kind == NUMBER) & _COMPARE[op](numbers, bound)
        # Where a float64 may round (either side past 2**53), compare the exact values instead.
        if abs(bound) >= _EXACT or self.big:
            for at in np.flatnonzero((kind == NUMBER) & (np.abs(numbers) >= _EXACT)):
                position = int(positions[at])
                met[at] = _COMPARE[op](self.big.get(position, float(numbers[at])), value)
        return met

    def _measure(self) -> None:
        arrays = (self.kind, self.number, self.code, self.length)
        self.nbytes = sum(a.nbytes for a in arrays) + self._code_bytes + 100 * len(self.big)


class FieldColumns:
    """A copy's columns, one per path a search named, the ``LIMIT`` most recently used."""

    LIMIT = 16

    def __init__(self) -> None:
        self._columns: OrderedDict[Path, Column] = OrderedDict()
        # Kept, not summed when asked: the scope cache asks while another search changes the columns.
        self.nbytes = 0

    def meeting(
        self, rowids: np.ndarray, positions: np.ndarray, where: Sequence[FieldCondition], size: int, texts: Texts
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``rowids`` (at ``positions`` of a copy of ``size`` rows, all held) meet every
        condition, and which the SQL statements must decide (texts SQL reads its own way, or every
        row when the search names more paths than the columns kept); the texts of rows not read yet
        come from ``texts``."""
        paths = list(dict.fromkeys(condition.path for condition in where))
        if len(paths) > self.LIMIT:  # its own columns would push each other out
            return np.zeros(len(positions), dtype=bool), np.ones(len(positions), dtype=bool)
        columns = [self._column(path, size) for path in paths]
        unread = np.zeros(len(positions), dtype=bool)
        for column in columns:
            unread |= column.kind[positions] == UNREAD
        if unread.any():
            self._read(rowids[unread], positions[unread], paths, columns, texts)
        self.nbytes = sum(column.nbytes for column in self._columns.values())
        met = np.ones(len(positions), dtype=bool)
        for condition in where:
            met &= columns[paths.index(condition.path)].meets(positions, condition)
        by_sql = np.zeros(len(positions), dtype=bool)
        for column in columns:
            by_sql |= column.kind[positions] == BY_SQL
        return met, by_sql

    def _column(self, path: Path, size: int) -> Column:
        column = self._columns.pop(path, None) or Column()
        self._columns[path] = column
        while len(self._columns) > self.LIMIT:
            self._columns.popitem(last=False)
        column.grow(size)
        return column

    @staticmethod
    def _read(
        rowids: np.ndarray, positions: np.ndarray, paths: list[Path], columns: list[Column], texts: Texts
    ) -> None:
        at = dict(zip(rowids.tolist(), positions.tolist(), strict=True))
        wanted = list(at)
        for start in range(0, len(wanted), _CHUNK):
            for rowid, text in texts(wanted[start : start + _CHUNK]):
                document = _document(text)
                try:
                    for path, column in zip(paths, columns, strict=True):
                        column.put(at[rowid], _at(document, path) if isinstance(document, dict) else document)
                except RecursionError:  # parsed, but too deep to write as canonical JSON here
                    for column in columns:
                        column.put(at[rowid], _BY_SQL)
        for column in columns:
            column._measure()


def _document(text: str) -> Any:
    """The JSON object a text holds; ``_NOT_OBJECT`` (JSON's own grammar: no NaN, no Infinity); or
    ``_BY_SQL`` where a backend may read the text otherwise: nested past Python's recursion limit,
    a number written past a float64's precision (PostgreSQL compares decimals exactly), an integer
    past 64 bits, a key written twice (SQLite reads the first, Python the last) or one SQLite's
    paths may match as escaped, a NUL or a lone surrogate (refused by PostgreSQL)."""
    if _deeper_than(text, _DEPTH):  # Python's parser would fail by the depth of the stack it is called on
        return _BY_SQL
    odd: list[str] = []

    def number(written: str) -> float:
        value = float(written)
        # As written, or as its shortest round trip writes it: then the decimals and the floats order alike.
        if not math.isfinite(value) or Decimal(written) != Decimal(repr(value)):
            odd.append(written)
        return value

    def integer(written: str) -> int:
        value = int(written)
        if abs(value) >= 2**63:
            odd.append(written)
        return value

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(items)
        if len(found) != len(items) or ("\\" in text and any(map(_escapable, found))):
            odd.append("key")
        return found

    try:
        document = json.loads(
            text, parse_float=number, parse_int=integer, parse_constant=_refuse, object_pairs_hook=pairs
        )
    except RecursionError:
        return _BY_SQL
    except ValueError:
        return _NOT_OBJECT
    if odd or _REFUSED_ESCAPES.search(text):
        return _BY_SQL
    return document if isinstance(document, dict) else _NOT_OBJECT


def _deeper_than(text: str, depth: int) -> bool:
    """Whether the JSON text nests objects and arrays more than ``depth`` deep (strings aside)."""
    if text.count("[") + text.count("{") <= depth:
        return False
    level = deepest = 0
    for char in _STRINGS.sub("", text):
        if char in "[{":
            level += 1
            deepest = max(deepest, level)
        elif char in "]}":
            level -= 1
    return deepest > depth


def _escapable(key: str) -> bool:
    """A key JSON text may write escaped (SQLite 3.40's paths match keys as the text writes them)."""
    return not key.isascii() or not key.isprintable() or any(c in key for c in '"\\/')


def _normal(value: Any) -> Any:
    """``value`` with every whole float as an integer, so canonical JSON compares numbers by value
    (``1e21`` and ``1000000000000000000000``; ``-0.0`` and ``0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def _refuse(constant: str) -> Any:
    raise ValueError(constant)


def _at(document: Any, path: Path) -> Any:
    """The value at ``path`` (keys of objects, indexes of arrays), or ``_ABSENT``."""
    for step in path:
        if isinstance(step, int) and isinstance(document, list) and 0 <= step < len(document):
            document = document[step]
        elif isinstance(step, str) and isinstance(document, dict) and step in document:
            document = document[step]
        else:
            return _ABSENT
    return document


def _float(number: int | float) -> float:
    """``number`` as a float64 (an integer past its range as an infinity of its sign)."""
    try:
        return float(number)
    except OverflowError:
        return float("inf") if number > 0 else float("-inf")


def _kind(value: Any) -> int:
    if value is _ABSENT:
        return MISSING
    if value is _NOT_OBJECT:
        return NOT_OBJECT
    if value is _BY_SQL:
        return BY_SQL
    if value is None:
        return NULL
    if value is True:
        return TRUE
    if value is False:
        return FALSE
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, dict):
        return OBJECT
    if isinstance(value, list):
        return ARRAY
    raise TypeError(f"not a JSON value: {type(value).__name__}")
