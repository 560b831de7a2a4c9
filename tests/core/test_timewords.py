"""Relative time words in a question, resolved against its anchor (hand-checked, and laws by hypothesis)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engramdb.core.timewords import Around, SessionsAgo, Window, closeness, read

ANCHOR = dt.date(2024, 5, 15)  # a Wednesday
DAYS = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2090, 12, 31))
D = dt.date


@pytest.mark.parametrize(
    ("query", "windows"),
    [
        ("What did I do today?", [(D(2024, 5, 15), D(2024, 5, 15))]),
        ("What did I cook yesterday?", [(D(2024, 5, 14), D(2024, 5, 14))]),
        ("And the day before yesterday?", [(D(2024, 5, 13), D(2024, 5, 13))]),
        ("What did we talk about last week?", [(D(2024, 5, 6), D(2024, 5, 12))]),
        ("anything this week", [(D(2024, 5, 13), D(2024, 5, 15))]),
        ("What did I buy last month?", [(D(2024, 4, 1), D(2024, 4, 30))]),
        ("Where did I travel last year?", [(D(2023, 1, 1), D(2023, 12, 31))]),
        ("What did I order two months ago?", [(D(2024, 3, 1), D(2024, 3, 31))]),
        ("the talk 3 days ago", [(D(2024, 5, 12), D(2024, 5, 12))]),
        ("a couple of weeks ago", [(D(2024, 4, 28), D(2024, 5, 4))]),
        ("in the past 10 days", [(D(2024, 5, 5), D(2024, 5, 15))]),
        ("over the last month", [(D(2024, 4, 15), D(2024, 5, 15))]),
        ("What did I eat last Friday?", [(D(2024, 5, 10), D(2024, 5, 10))]),
        ("the trip last March", [(D(2024, 3, 1), D(2024, 3, 31))]),
        ("the trip last June", [(D(2023, 6, 1), D(2023, 6, 30))]),  # June has not come yet this year
        ("what have I been reading lately", [(D(2024, 4, 15), D(2024, 5, 15))]),
        ("anything before last week?", [(D(2024, 5, 6), D(2024, 5, 12)), (None, D(2024, 5, 5))]),
        ("what happened since March 3, 2024", [(D(2024, 3, 4), None)]),
        ("what happened until March", [(None, D(2024, 2, 29))]),
        # no relative time
        ("What is my sister's name?", []),
        ("May I ask what happened on 13 October, 2023?", []),  # a calendar date is timeref's
    ],
)
def test_windows(query: str, windows: list[tuple[dt.date | None, dt.date | None]]) -> None:
    assert [(w.start, w.end) for w in read(query, ANCHOR).windows] == windows


def test_sessions_and_events() -> None:
    assert read("what did I say in our last session?", ANCHOR).sessions == (SessionsAgo(1, "last session"),)
    assert read("the plan two conversations ago", ANCHOR).sessions == (SessionsAgo(2, "two conversations ago"),)
    words = read("What did I use before the migration to Postgres?", ANCHOR)
    assert words.events == (Around("before", "the migration to Postgres", "before the migration to Postgres"),)
    assert read("What changed after the launch, and why?", ANCHOR).events[0].event == "the launch"
    assert not read("What is the capital of France?", ANCHOR)


@given(DAYS)
def test_today_always_holds_the_anchor(anchor: dt.date) -> None:
    (window,) = read("what did I do today", anchor).windows
    assert window.gap(anchor) == 0 and window.start == window.end == anchor


@given(DAYS, st.integers(min_value=1, max_value=12))
def test_n_days_ago_is_that_day(anchor: dt.date, n: int) -> None:
    (window,) = read(f"what happened {n} days ago", anchor).windows
    assert window.start == window.end == anchor - dt.timedelta(days=n)


@given(DAYS)
def test_last_week_is_the_seven_days_before_this_weeks_monday(anchor: dt.date) -> None:
    (window,) = read("what did I do last week", anchor).windows
    assert window.start is not None and window.end is not None
    assert (window.end - window.start).days == 6 and window.start.weekday() == 0
    assert window.end < anchor and window.gap(anchor - dt.timedelta(days=7)) == 0


@given(DAYS, st.integers(min_value=1, max_value=12))
def test_months_ago_is_a_whole_calendar_month_before_the_anchors(anchor: dt.date, n: int) -> None:
    (window,) = read(f"what did I buy {n} months ago", anchor).windows
    assert window.start is not None and window.end is not None
    assert window.start.day == 1 and (window.end + dt.timedelta(days=1)).day == 1
    assert (anchor.year * 12 + anchor.month) - (window.start.year * 12 + window.start.month) == n


@given(DAYS, st.integers(min_value=1, max_value=30))
def test_in_the_past_n_days_holds_the_anchor_and_the_day_n_back(anchor: dt.date, n: int) -> None:
    (window,) = read(f"what did I read in the past {n} days", anchor).windows
    assert window.gap(anchor) == 0 and window.gap(anchor - dt.timedelta(days=n)) == 0
    assert window.gap(anchor + dt.timedelta(days=1)) == 1


@given(DAYS, DAYS)
def test_closeness_is_one_inside_and_falls_outside(day: dt.date, other: dt.date) -> None:
    start, end = min(day, other), max(day, other)
    window = (Window(start, end, "x"),)
    assert closeness(day, window, 7.0) == 1.0
    assert closeness(end + dt.timedelta(days=7), window, 7.0) == pytest.approx(0.36787944117)
    assert closeness(start - dt.timedelta(days=1), window, 7.0) < 1.0
