"""A tenant's usage over time, one implementation for both backends: hourly counters and gauges in
``usage_hourly``, and the hourly sums of the model-call ledger.

Counters (recalls, their time) are added to their hour; gauges (memories by source and status)
replace the hour's value, so an hour keeps the last one taken in it. The usage job writes both
(core/aging/usage.py); ``usage_series`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engramdb.storage.knowledge.rows import Run, chunks
from engramdb.storage.knowledge.sql import Dialect
from engramdb.storage.rows import HourValue

WriteMany = Callable[[str, Sequence[Sequence[Any]]], None]  # one statement over many rows, committed


class UsageSeriesStore:
    """A tenant's hourly counters and gauges (each write commits on its own)."""

    def __init__(self, run: Run, dialect: Dialect, write_many: WriteMany) -> None:
        self._run = run
        self._d = dialect
        self._write_many = write_many

    def add(self, values: Sequence[HourValue]) -> None:
        """Add counter values to their hours."""
        self._upsert(values, "usage_hourly.value + excluded.value")

    def put(self, values: Sequence[HourValue]) -> None:
        """Set gauge values of their hours (the last one written in an hour stays)."""
        self._upsert(values, "excluded.value")

    def _upsert(self, values: Sequence[HourValue], new_value: str) -> None:
        tenant = [] if self._d.tenant is None else [self._d.tenant]
        columns = ("tenant, " if tenant else "") + "hour, metric, dimension, value"
        conflict = ("tenant, " if tenant else "") + "hour, metric, dimension"
        sql = (
            f"INSERT INTO usage_hourly ({columns}) VALUES ({self._d.marks(len(tenant) + 4)}) "
            f"ON CONFLICT ({conflict}) DO UPDATE SET value = {new_value}"
        )
        for chunk in chunks(list(values), 500):
            self._write_many(sql, [(*tenant, v.hour, v.metric, v.dimension, v.value) for v in chunk])

    def hours(self, since: str, until: str) -> list[HourValue]:
        """Every value kept for the hours from ``since`` up to ``until`` (both ``YYYY-MM-DDTHH``)."""
        m = self._d.mark
        owned, params = self._d.owned("usage_hourly")
        rows = self._run(
            f"SELECT hour, metric, dimension, value FROM usage_hourly WHERE {owned}hour >= {m} AND hour < {m} "
            "ORDER BY hour, metric, dimension",
            [*params, since, until],
        )
        return [HourValue(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in rows]

    def model_hours(self, since: str, until: str) -> list[HourValue]:
        """The model-call ledger summed per hour: calls per purpose, prompt and completion tokens."""
        m = self._d.mark
        owned, params = self._d.owned("model_calls")
        rows = self._run(
            "SELECT substr(at, 1, 13), purpose, count(*), sum(prompt_tokens), sum(completion_tokens) "
            f"FROM model_calls WHERE {owned}at >= {m} AND at < {m} GROUP BY substr(at, 1, 13), purpose",
            [*params, since, until],
        )
        found: list[HourValue] = []
        for hour, purpose, calls, prompt, completion in rows:
            found.append(HourValue(str(hour), "model_calls", str(purpose), float(calls)))
            found.append(HourValue(str(hour), "model_tokens", "prompt", float(prompt or 0)))
            found.append(HourValue(str(hour), "model_tokens", "completion", float(completion or 0)))
        return found

    def memory_counts(self) -> list[tuple[str, str, int]]:
        """How many memories the tenant holds now, by source and status."""
        owned, params = self._d.owned("memories")
        where = f" WHERE {owned[: -len(' AND ')]}" if owned else ""
        rows = self._run(
            f"SELECT source, status, count(*) FROM memories{where} GROUP BY source, status ORDER BY source, status",
            params,
        )
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]
