"""Geometry for the dashboard's two drawings, as plain numbers the templates place in SVG.

The score breakdown: one stacked bar per recalled memory, a segment per arm and feature, all on
one scale. The timeline: one lane per version of a fact on two axes, valid time (when the claim
held in the world) and record time (when the store believed it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from engramdb.models.memories import MemoryView
from engramdb.models.recall import RecalledMemory

WIDTH = 600.0  # the drawing's width in SVG units; the stylesheet scales it to the column
ARMS = ("dense", "lexical")


@dataclass(frozen=True)
class Segment:
    """One arm's or feature's share of a score, placed on the bar."""

    name: str
    value: float
    x: float
    width: float


def components(memory: RecalledMemory) -> list[tuple[str, float]]:
    """The parts of a memory's score, arms first, in a fixed order (they add up to the score)."""
    if memory.explain is None:
        return []
    arms = [(name, memory.explain.arms[name].contribution) for name in ARMS if name in memory.explain.arms]
    return arms + sorted(memory.explain.features.items())


def score_bars(memories: list[RecalledMemory]) -> list[list[Segment]]:
    """A bar per memory; the longest total spans the full width (negative parts are not drawn)."""
    totals = [sum(max(v, 0.0) for _, v in components(m)) for m in memories]
    scale = WIDTH / max([*totals, 1e-9])
    bars = []
    for memory in memories:
        x, bar = 0.0, []
        for name, value in components(memory):
            width = max(value, 0.0) * scale
            bar.append(Segment(name, value, round(x, 2), round(width, 2)))
            x += width
        bars.append(bar)
    return bars


@dataclass(frozen=True)
class Span:
    """A version's interval on one axis (``open``: it still holds, drawn to the axis' end)."""

    start: float
    end: float
    open: bool


@dataclass(frozen=True)
class Lane:
    """One version of a fact on both axes."""

    memory: MemoryView
    valid: Span
    record: Span


@dataclass(frozen=True)
class Axis:
    """A time axis: its first and last instant and the ticks to label it with."""

    start: datetime
    end: datetime
    ticks: list[tuple[float, str]]

    def x(self, moment: datetime) -> float:
        total = (self.end - self.start).total_seconds() or 1.0
        return round(WIDTH * (moment - self.start).total_seconds() / total, 2)


def moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _label(instant: datetime, span: timedelta) -> str:
    """A tick's label, as fine as the axis needs: days, minutes, or seconds and milliseconds."""
    if span >= timedelta(days=2):
        return instant.strftime("%Y-%m-%d")
    if span >= timedelta(minutes=10):
        return instant.strftime("%m-%d %H:%M")
    return instant.strftime("%H:%M:%S.%f")[:-3]


def _axis(instants: list[datetime], count: int = 4) -> Axis:
    start, end = min(instants), max(instants)
    if end <= start:  # one instant: give it a day of room on either side
        start, end = start.replace(hour=0, minute=0, second=0, microsecond=0), start.replace(hour=23, minute=59)
    step = (end - start) / count
    axis = Axis(start, end, [])
    instants = [start + step * i for i in range(count + 1)]
    axis.ticks.extend((axis.x(t), _label(t, end - start)) for t in instants)
    return axis


def timeline(versions: list[MemoryView], tombstones: list[str], now: datetime | None = None) -> dict[str, object]:
    """Both axes and one lane per version; ``tombstones`` are creation times, marked on record time."""
    now = now or datetime.now(UTC)
    valid_ends = [moment(v.invalid_at or v.valid_until) for v in versions]
    valid_starts = [moment(v.valid_from) or moment(v.recorded_at) or now for v in versions]
    record_starts = [moment(v.active_from or v.recorded_at) or now for v in versions]
    record_ends = [moment(v.retired_at) for v in versions]
    valid = _axis([*valid_starts, *(e for e in valid_ends if e), now])
    record = _axis([*record_starts, *(e for e in record_ends if e), *(moment(t) or now for t in tombstones), now])
    lanes = [
        Lane(
            v,
            Span(valid.x(vs), valid.x(ve or valid.end), ve is None),
            Span(record.x(rs), record.x(re or record.end), re is None),
        )
        for v, vs, ve, rs, re in zip(versions, valid_starts, valid_ends, record_starts, record_ends, strict=True)
    ]
    marks = [record.x(moment(t) or now) for t in tombstones]
    return {"valid": valid, "record": record, "lanes": lanes, "tombstones": marks, "width": WIDTH}
