"""The machine's load while a phase runs: other work on a small machine moves every number."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any


def _cpu_times() -> tuple[int, int] | None:
    """Return (busy, total) jiffies of all CPUs since boot, or None off Linux."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


class PhaseLoad:
    """Samples the 1-minute load average every ``interval`` s while a ``with`` block runs, and
    the share of CPU time the whole machine was busy (this benchmark included)."""

    def __init__(self, name: str, interval: float = 1.0) -> None:
        self.name = name
        self.interval = interval
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._cpu_start: tuple[int, int] | None = None
        self._cpu_end: tuple[int, int] | None = None
        self._started = 0.0
        self.seconds = 0.0

    def begin(self) -> PhaseLoad:
        """Start sampling; return self."""
        self._started = time.perf_counter()
        self._cpu_start = _cpu_times()
        self.samples.append(os.getloadavg()[0])
        self._thread.start()
        return self

    def end(self) -> dict[str, Any]:
        """Stop sampling; return the summary."""
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])
        self._cpu_end = _cpu_times()
        self.seconds = time.perf_counter() - self._started
        return self.summary()

    def __enter__(self) -> PhaseLoad:
        return self.begin()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.end()

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict[str, Any]:
        """Return the phase's load: 1-minute load average at start, end, min, mean, max, and CPU busy %."""
        busy = None
        if self._cpu_start and self._cpu_end and self._cpu_end[1] > self._cpu_start[1]:
            used = self._cpu_end[0] - self._cpu_start[0]
            busy = round(100 * used / (self._cpu_end[1] - self._cpu_start[1]), 1)
        return {
            "phase": self.name,
            "seconds": round(self.seconds, 2),
            "load1Start": round(self.samples[0], 2),
            "load1End": round(self.samples[-1], 2),
            "load1Min": round(min(self.samples), 2),
            "load1Mean": round(sum(self.samples) / len(self.samples), 2),
            "load1Max": round(max(self.samples), 2),
            "cpuBusyPercent": busy,
        }
