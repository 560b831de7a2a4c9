"""Calendar dates named in a query ("on 13 October, 2023", "in March 2023", "in 2022").

Recall uses them to favour memories observed in, or soon after, the named period: people
mostly tell of an event in the days or weeks after it happens, so a memory observed a little
after the period is as likely to be about it as one observed inside. Relative expressions
("last week") need the asker's clock and are not read; a month without a year matches that
month in any year.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
from dataclasses import dataclass

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# Longest forms first: each span of the query is read once.
_FORMS = [
    re.compile(rf"\b{_YEAR}-(?P<month>0[1-9]|1[0-2])-(?P<day>0[1-9]|[12]\d|3[01])\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:am|pm|%|:))", re.IGNORECASE),
    re.compile(rf"\b{_YEAR}\b"),
    # A month name alone: capitalised and after a preposition ("in May", not "May I ask").
    re.compile(
        r"(?i:\b(?:in|on|of|since|until|till|by|during|early|mid|late|last|next|this|before|after|from|to|"
        r"through|around)\s+)(?P<month>" + "|".join(calendar.month_name[1:]) + r")\b"
    ),
]


@dataclass(frozen=True)
class DateRef:
    """A day, a month or a year named in a query; ``year`` None means "that month, any year"."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def span(self, year: int) -> tuple[dt.date, dt.date]:
        """Return the first and last day of the period (in ``year`` when the query gave none)."""
        year = self.year or year
        if self.month is None:
            return dt.date(year, 1, 1), dt.date(year, 12, 31)
        last = calendar.monthrange(year, self.month)[1]
        if self.day is None:
            return dt.date(year, self.month, 1), dt.date(year, self.month, last)
        day = dt.date(year, self.month, min(self.day, last))
        return day, day


def date_refs(query: str) -> list[DateRef]:
    """Return the calendar dates ``query`` names, in order of appearance, without repeats."""
    return list(dict.fromkeys(ref for _, _, ref in date_spans(query)))


def date_spans(query: str) -> list[tuple[int, int, DateRef]]:
    """Return (start, end, date) of every calendar date ``query`` names, in order of appearance."""
    taken = [False] * len(query)
    found: list[tuple[int, int, DateRef]] = []
    for form in _FORMS:
        for match in form.finditer(query):
            if any(taken[match.start() : match.end()]):
                continue
            parts = match.groupdict()
            month = parts.get("month")
            ref = DateRef(
                year=int(parts["year"]) if parts.get("year") else None,
                month=(int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]) if month else None,
                day=int(parts["day"]) if parts.get("day") else None,
            )
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
            found.append((match.start(), match.end(), ref))
    return sorted(found, key=lambda f: f[0])


def closeness(observed: dt.date, refs: list[DateRef], *, after_days: float, decay_days: float) -> float:
    """Return 1.0 when ``observed`` falls in a named period or up to ``after_days`` after it,
    decaying by e every ``decay_days`` further away (best over ``refs``; 0.0 with none)."""
    best = 0.0
    for ref in refs:
        years = (observed.year,) if ref.year else (observed.year - 1, observed.year, observed.year + 1)
        for year in years:
            start, end = ref.span(year)
            if observed < start:
                gap = float((start - observed).days)
            else:
                gap = max(0.0, (observed - end).days - after_days)
            best = max(best, math.exp(-gap / decay_days))
    return best


def is_date_word(word: str) -> bool:
    """Return whether a lower-case query word is a number or a month name (part of a date)."""
    return word.isdigit() or word.rstrip(".") in _MONTHS
