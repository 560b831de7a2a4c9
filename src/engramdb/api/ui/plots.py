"""Geometry for the usage page's charts: series over time as polylines or bars, in SVG units.

Every chart has one point per bucket of the range (counters missing from a bucket are 0; a gauge
keeps its last reading until the next), a y-axis that ends on a round number, and a few labelled
ticks on each axis. The template draws them and lists the same numbers in a table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engramdb import clock
from engramdb.models.series import SeriesView

WIDTH, HEIGHT = 600.0, 160.0
STEPS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


@dataclass(frozen=True)
class Plotted:
    """One series of a chart: its name, its values per bucket, and its drawing."""

    name: str
    values: list[float]
    points: str = ""  # a polyline's points
    bars: list[tuple[float, float, float]] = field(default_factory=list)  # x, y, height


@dataclass(frozen=True)
class Chart:
    """A chart: its series, axes and what it is of."""

    id: str
    title: str
    unit: str
    buckets: list[str]
    series: list[Plotted]
    top: float
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    bars: bool

    @property
    def empty(self) -> bool:
        return not any(v for s in self.series for v in s.values)


def buckets(since: str, until: str, bucket: str) -> list[str]:
    """The start of every bucket from ``since`` up to ``until``, as the series name them."""
    start, end, step = clock.parse(since), clock.parse(until), STEPS[bucket]
    found, at = [], start
    while at < end:
        found.append(clock.to_text(at))
        at += step
    return found


def _round_up(value: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten at or above ``value``."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(float(m * power) for m in (1, 2, 5, 10) if m * power >= value)


def _values(series: SeriesView, starts: list[str]) -> list[float]:
    by_start = {p.at: p.value for p in series.points}
    if series.kind != "gauge":
        return [by_start.get(at, 0.0) for at in starts]
    values, last = [], 0.0
    for at in starts:
        last = by_start.get(at, last)
        values.append(last)
    return values


def _label(at: str, bucket: str) -> str:
    moment: datetime = clock.parse(at)
    return moment.strftime("%m-%d") if bucket == "day" else moment.strftime("%m-%d %H:00")


def chart(
    id: str, title: str, unit: str, series: list[tuple[str, SeriesView]], starts: list[str], bucket: str, bars: bool
) -> Chart:
    """A chart of ``series`` (name, series) over the buckets ``starts``; bars are drawn side by side."""
    values = [(name, _values(s, starts)) for name, s in series]
    top = _round_up(max([v for _, vs in values for v in vs] or [0.0]))
    n = max(len(starts), 1)
    step = WIDTH / n
    plotted = []
    for k, (name, vs) in enumerate(values):
        ys = [HEIGHT - v / top * HEIGHT for v in vs]
        if bars:
            width = step / max(len(values), 1)
            drawn = [(round(i * step + k * width, 2), round(y, 2), round(HEIGHT - y, 2)) for i, y in enumerate(ys)]
            plotted.append(Plotted(name, vs, bars=drawn))
        else:
            points = " ".join(f"{round(i * step + step / 2, 2)},{round(y, 2)}" for i, y in enumerate(ys))
            plotted.append(Plotted(name, vs, points=points))
    ticks = sorted({round(i * (n - 1) / 4) for i in range(5)}) if starts else []
    x_ticks = [(round(i * step + step / 2, 2), _label(starts[i], bucket)) for i in ticks]
    y_ticks = [(round(HEIGHT - f * HEIGHT, 2), f"{top * f:g}") for f in (0.0, 0.5, 1.0)]
    return Chart(id, title, unit, starts, plotted, top, x_ticks, y_ticks, bars)
