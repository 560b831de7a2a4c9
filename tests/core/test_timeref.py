"""Dates named in a query, and how close a memory's observedAt is to them (hand-checked)."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from engramdb.core.timeref import DateRef, closeness, date_refs, is_date_word


@pytest.mark.parametrize(
    ("query", "refs"),
    [
        ("What did Caroline share on October 13, 2023?", [DateRef(2023, 10, 13)]),
        ("What did she paint on 13 October, 2023?", [DateRef(2023, 10, 13)]),
        ("Where did Dave come back from on 1st September 2023?", [DateRef(2023, 9, 1)]),
        ("What happened on the 5th of May 2022?", [DateRef(2022, 5, 5)]),
        ("Plans for 2024-02-29?", [DateRef(2024, 2, 29)]),
        ("What did John attend in March 2023?", [DateRef(2023, 3)]),
        ("Which trip was in Sept. 2022?", [DateRef(2022, 9)]),
        ("What health incidents did Evan face in 2023?", [DateRef(2023)]),
        ("Which outdoor spot did Joanna visit in May?", [DateRef(None, 5)]),
        ("between August 11 and August 15 2023", [DateRef(None, 8, 11), DateRef(2023, 8, 15)]),
        ("the meeting on March 3 at 10 am", [DateRef(None, 3, 3)]),
        # Not dates: the verb "may", a time of day, a count, a plain number.
        ("May I ask what you may like?", []),
        ("He may have 3 cats and 12 dogs", []),
        ("Call me at 2023 Main Street", [DateRef(2023)]),  # a bare year-like number is read as a year
        ("What is Caroline's identity?", []),
    ],
)
def test_date_refs(query: str, refs: list[DateRef]) -> None:
    assert date_refs(query) == refs


def test_a_date_named_twice_is_one_ref() -> None:
    assert date_refs("in March 2023, yes, March 2023") == [DateRef(2023, 3)]


def test_closeness_is_one_in_the_period_and_in_the_days_after_it() -> None:
    march = [DateRef(2023, 3)]
    week = {"after_days": 7.0, "decay_days": 7.0}
    assert closeness(dt.date(2023, 3, 1), march, **week) == 1.0
    assert closeness(dt.date(2023, 3, 31), march, **week) == 1.0
    assert closeness(dt.date(2023, 4, 7), march, **week) == 1.0  # told a week after
    assert closeness(dt.date(2023, 4, 14), march, **week) == pytest.approx(math.exp(-7 / 7))
    assert closeness(dt.date(2023, 2, 21), march, **week) == pytest.approx(math.exp(-8 / 7))  # before: no grace
    assert closeness(dt.date(2024, 3, 10), march, **week) < 1e-10  # the same month a year later
    assert closeness(dt.date(2023, 3, 10), [], **week) == 0.0


def test_a_month_without_a_year_matches_that_month_in_any_year() -> None:
    may = [DateRef(None, 5)]
    week = {"after_days": 7.0, "decay_days": 7.0}
    assert closeness(dt.date(2022, 5, 12), may, **week) == 1.0
    assert closeness(dt.date(2031, 5, 30), may, **week) == 1.0
    next_january = [DateRef(None, 1, 2)]
    assert closeness(dt.date(2022, 12, 31), next_january, **week) == pytest.approx(math.exp(-2 / 7))
    assert closeness(dt.date(2022, 8, 1), may, **week) < 0.01


def test_a_day_ref_in_a_short_month_is_clamped() -> None:
    assert DateRef(None, 2, 30).span(2023) == (dt.date(2023, 2, 28), dt.date(2023, 2, 28))


def test_date_words() -> None:
    assert all(is_date_word(w) for w in ("2023", "13", "october", "oct", "sept", "may"))
    assert not any(is_date_word(w) for w in ("octopus", "marching", "year", "13th"))
