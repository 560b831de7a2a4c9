"""Relative time in a question ("yesterday", "last week", "two months ago", "before the migration").

Calendar dates a query names are read by ``core/timeref.py``; the expressions here need the
asker's clock, the *anchor* (the recall's ``asOf``, else now), and resolve against it:

* a day: today, yesterday, the day before yesterday, last night, last/on <weekday>;
* a period: this/last week, month, year; last <month name>; N days/weeks/months/years ago
  (N a digit, a number word up to twelve, a/an, a couple of, a few, several); in the last/past
  N days/weeks/months/years; recently, lately, these days (the last 30 days);
* a session: last/previous session (or conversation, chat), N sessions ago: a position among the
  scope's sessions, newest first, which the caller turns into session ids;
* an event: before/after/since/until X, where X is a date (any of the above, or a calendar date)
  or words naming an event; the caller finds the memory X names and takes its time as the pivot.

A period is a closed window of days; "before X" is open to the past, "after X" to the future.
Weeks start on Monday. Everything is pure: no store, no clock but the anchor given.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from engramdb.core import timeref

RECENT_DAYS = 30
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 4,
}
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_SESSION = r"(?:session|conversation|chat|talk)s?"
_EVENT_END = r"(?=[?.!,;:]|\s+(?:and|but|or|when|while|what|which|who|where|how|did|do|does|was|were)\b|$)"


@dataclass(frozen=True)
class Window:
    """A span of days (``None``: open on that side) that a question's time words point at."""

    start: dt.date | None
    end: dt.date | None
    phrase: str

    def gap(self, day: dt.date) -> int:
        """Days from ``day`` to the window (0 inside it)."""
        if self.start is not None and day < self.start:
            return (self.start - day).days
        if self.end is not None and day > self.end:
            return (day - self.end).days
        return 0


@dataclass(frozen=True)
class SessionsAgo:
    """The ``back``-th session before the current one (1: the last session)."""

    back: int
    phrase: str


@dataclass(frozen=True)
class Around:
    """Before or after an event the words ``event`` name (resolved by finding that memory)."""

    side: str  # "before" or "after"
    event: str
    phrase: str


@dataclass(frozen=True)
class TimeWords:
    """What a question's time words resolved to."""

    windows: tuple[Window, ...] = ()
    sessions: tuple[SessionsAgo, ...] = ()
    events: tuple[Around, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.windows or self.sessions or self.events)


def _count(text: str) -> int:
    text = " ".join(text.lower().split())
    return int(text) if text.isdigit() else _NUMBERS[text]


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _month_start(year: int, month: int) -> dt.date:
    return dt.date(year, month, 1)


def _month_back(day: dt.date, back: int) -> tuple[dt.date, dt.date]:
    """The calendar month ``back`` months before ``day``'s month."""
    index = day.year * 12 + day.month - 1 - back
    year, month = divmod(index, 12)
    start = _month_start(year, month + 1)
    return start, start.replace(day=calendar.monthrange(year, month + 1)[1])


def _years_back(day: dt.date, back: int) -> tuple[dt.date, dt.date]:
    return dt.date(day.year - back, 1, 1), dt.date(day.year - back, 12, 31)


def _shift(day: dt.date, unit: str, n: int) -> dt.date:
    """``day`` moved ``n`` units into the past (months and years by the calendar, clamped)."""
    if unit == "day":
        return day - dt.timedelta(days=n)
    if unit == "week":
        return day - dt.timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _ago(unit: str, n: int, anchor: dt.date) -> tuple[dt.date, dt.date]:
    if unit == "day":
        day = anchor - dt.timedelta(days=n)
        return day, day
    if unit == "week":  # about that week: three days either side of the day N weeks back
        day = anchor - dt.timedelta(weeks=n)
        return day - dt.timedelta(days=3), day + dt.timedelta(days=3)
    if unit == "month":
        return _month_back(anchor, n)
    return _years_back(anchor, n)


def _last_weekday(anchor: dt.date, weekday: int) -> dt.date:
    """The latest ``weekday`` strictly before ``anchor``."""
    back = (anchor.weekday() - weekday) % 7 or 7
    return anchor - dt.timedelta(days=back)


def _last_month_named(anchor: dt.date, month: int) -> tuple[dt.date, dt.date]:
    """The latest month called ``month`` that ended before ``anchor``'s month began."""
    year = anchor.year if month < anchor.month else anchor.year - 1
    return _month_start(year, month), dt.date(year, month, calendar.monthrange(year, month)[1])


def _periods(query: str, anchor: dt.date) -> list[tuple[int, int, dt.date, dt.date]]:
    """(start offset, end offset, first day, last day) of each period the query names."""
    found: list[tuple[int, int, dt.date, dt.date]] = []
    taken = [False] * len(query)
    for pattern, resolve in _RULES:  # longest forms first: each span of the query is read once
        for match in pattern.finditer(query):
            if any(taken[match.start() : match.end()]):
                continue
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
            first, last = resolve(match, anchor)
            found.append((match.start(), match.end(), first, last))
    return sorted(found)


def _rule(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b{pattern}\b", re.IGNORECASE)


Resolve = Callable[[re.Match[str], dt.date], tuple[dt.date, dt.date]]
_RULES: list[tuple[re.Pattern[str], Resolve]] = [
    (
        _rule(rf"(?:in|over|during|within)\s+the\s+(?:last|past)\s+(?:{_COUNT}\s+)?{_UNIT}"),
        lambda m, a: (_shift(a, m["unit"].lower(), _count(m["n"]) if m["n"] else 1), a),
    ),
    (_rule(r"the\s+day\s+before\s+yesterday"), lambda m, a: (a - dt.timedelta(days=2),) * 2),
    (_rule(r"yesterday|last\s+night"), lambda m, a: (a - dt.timedelta(days=1),) * 2),
    (_rule(r"today|tonight|this\s+(?:morning|afternoon|evening)"), lambda m, a: (a, a)),
    (_rule(r"this\s+week"), lambda m, a: (_monday(a), a)),
    (
        _rule(r"(?:last|previous|past)\s+week|the\s+week\s+before"),
        lambda m, a: (_monday(a) - dt.timedelta(days=7), _monday(a) - dt.timedelta(days=1)),
    ),
    (_rule(r"this\s+month"), lambda m, a: (a.replace(day=1), a)),
    (_rule(r"(?:last|previous)\s+month"), lambda m, a: _month_back(a, 1)),
    (_rule(r"this\s+year"), lambda m, a: (dt.date(a.year, 1, 1), a)),
    (_rule(r"(?:last|previous)\s+year"), lambda m, a: _years_back(a, 1)),
    (
        _rule(r"(?:last|on|this\s+past)\s+(?P<weekday>" + "|".join(_WEEKDAYS) + r")"),
        lambda m, a: (_last_weekday(a, _WEEKDAYS[m["weekday"].lower()]),) * 2,
    ),
    (
        _rule(r"last\s+(?P<month>" + "|".join(_MONTH_NAMES) + r")"),
        lambda m, a: _last_month_named(a, _MONTH_NAMES[m["month"].lower()]),
    ),
    (_rule(rf"{_COUNT}\s+{_UNIT}\s+ago"), lambda m, a: _ago(m["unit"].lower(), _count(m["n"]), a)),
    (_rule(r"recently|lately|these\s+days"), lambda m, a: (a - dt.timedelta(days=RECENT_DAYS), a)),
]
_SESSIONS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], int]]] = [
    (_rule(rf"(?:last|previous|prior|earlier)\s+{_SESSION}"), lambda m: 1),
    (_rule(rf"{_COUNT}\s+{_SESSION}\s+ago"), lambda m: _count(m["n"])),
]
_AROUND = _rule(r"(?P<side>before|after|since|until|till|prior\s+to)\s+(?P<event>[^?.!,;:]{2,80}?)" + _EVENT_END)
_SIDES = {"before": "before", "until": "before", "till": "before", "after": "after", "since": "after"}


def read(query: str, anchor: dt.date) -> TimeWords:
    """Return the windows, session positions and events ``query``'s time words point at."""
    periods = _periods(query, anchor)
    windows = [Window(first, last, query[start:end]) for start, end, first, last in periods]
    sessions = [SessionsAgo(back(m), m.group(0)) for pattern, back in _SESSIONS for m in pattern.finditer(query)]
    pivots = periods + _calendar_periods(query, anchor)
    events: list[Around] = []
    for match in _AROUND.finditer(query):
        if any(start <= match.start() < end for start, end, _, _ in periods):  # "the day before yesterday"
            continue
        side = _SIDES.get(match["side"].lower(), "before")
        pivot = next((period[2:] for period in pivots if period[0] <= match.start("event") < period[1]), None)
        if pivot is None:
            events.append(Around(side, match["event"].strip(), match.group(0)))
        elif side == "before":  # before a date: the window is open to the past
            windows.append(Window(None, pivot[0] - dt.timedelta(days=1), match.group(0)))
        else:
            windows.append(Window(pivot[1] + dt.timedelta(days=1), None, match.group(0)))
    return TimeWords(tuple(dict.fromkeys(windows)), tuple(dict.fromkeys(sessions)), tuple(dict.fromkeys(events)))


def _calendar_periods(query: str, anchor: dt.date) -> list[tuple[int, int, dt.date, dt.date]]:
    """The calendar dates the query names, as periods (a date without a year: its latest at or before
    the anchor), to serve as the pivot of before/after."""
    out = []
    for start, end, ref in timeref.date_spans(query):
        year = ref.year if ref.year is not None else anchor.year
        first, last = ref.span(year)
        if ref.year is None and first > anchor:
            first, last = ref.span(year - 1)
        out.append((start, end, first, last))
    return out


def closeness(day: dt.date, windows: tuple[Window, ...], decay_days: float) -> float:
    """1.0 inside a window, falling by e every ``decay_days`` outside it (best over the windows)."""
    best = 0.0
    for window in windows:
        best = max(best, math.exp(-window.gap(day) / decay_days))
    return best
