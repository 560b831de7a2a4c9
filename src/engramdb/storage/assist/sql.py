"""Model-assisted memory's SQL, the same text on both backends (``?`` marks; PostgreSQL's
statements get ``%s``). On PostgreSQL the tables carry a ``tenant`` column filled from the
session's ``engram.tenant`` and row-level security keeps each tenant to its own rows, so no
statement here names a tenant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engramdb.storage.assist.port import (
    CALL_COLUMNS,
    JOB_COLUMNS,
    LINK_COLUMNS,
    JobRecord,
    LinkRecord,
    ModelCall,
    SlotText,
    UsageTotals,
)
from engramdb.storage.common import row_values


def _marks(columns: str) -> str:
    return ", ".join("?" for _ in columns.split(","))


def _call(row: Sequence[Any]) -> ModelCall:
    values = list(row)
    values[9] = bool(values[9])
    return ModelCall(*values)


class AssistTransactionSQL:
    """``AssistWrites`` over ``_assist_run`` (each backend's transaction supplies it)."""

    def _assist_run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def put_link(self, link: LinkRecord) -> LinkRecord:
        rows = self._assist_run(
            "UPDATE model_links SET state = ?, verdict = ?, confidence = ?, reason = ?, prompt_version = ?, "
            f"model = ?, updated_at = ? WHERE link_id = ? RETURNING {LINK_COLUMNS}",
            (
                link.state,
                link.verdict,
                link.confidence,
                link.reason,
                link.prompt_version,
                link.model,
                link.updated_at,
                link.link_id,
            ),
        )
        if not rows:
            rows = self._assist_run(
                f"INSERT INTO model_links ({LINK_COLUMNS}) VALUES ({_marks(LINK_COLUMNS)}) RETURNING {LINK_COLUMNS}",
                row_values(link),
            )
        return LinkRecord(*rows[0])

    def links_from(self, scope_key: str, from_id: str, states: Sequence[str]) -> list[LinkRecord]:
        marks = ", ".join("?" for _ in states)
        rows = self._assist_run(
            f"SELECT {LINK_COLUMNS} FROM model_links WHERE scope_key = ? AND from_id = ? AND state IN ({marks}) "
            "ORDER BY created_at, link_id",
            (scope_key, from_id, *states),
        )
        return [LinkRecord(*r) for r in rows]

    def enqueue_job(self, job: JobRecord) -> bool:
        rows = self._assist_run(
            f"INSERT INTO model_jobs ({JOB_COLUMNS}) SELECT {_marks(JOB_COLUMNS)} "
            "WHERE NOT EXISTS (SELECT 1 FROM model_jobs WHERE job_id = ?) RETURNING job_id",
            (*row_values(job), job.job_id),
        )
        return bool(rows)

    def claim_job(self, now: str, lease_until: str) -> JobRecord | None:
        rows = self._assist_run(
            "UPDATE model_jobs SET state = 'running', attempts = attempts + 1, next_at = ?, updated_at = ?, "
            "started_at = ? "
            "WHERE job_id = (SELECT job_id FROM model_jobs WHERE state IN ('queued', 'running') AND next_at <= ? "
            f"ORDER BY next_at, created_at LIMIT 1) RETURNING {JOB_COLUMNS}",
            (lease_until, now, now, now),
        )
        return JobRecord(*rows[0]) if rows else None

    def finish_job(
        self,
        job_id: str,
        *,
        state: str,
        at: str,
        next_at: str,
        error: str | None,
        result_json: str | None,
        cpu_ms: float | None = None,
    ) -> None:
        finished = at if state in ("done", "failed") else None
        self._assist_run(
            "UPDATE model_jobs SET state = ?, next_at = ?, error = ?, result_json = coalesce(?, result_json), "
            "updated_at = ?, finished_at = ?, run_cpu_ms = ? WHERE job_id = ? RETURNING job_id",
            (state, next_at, error, result_json, at, finished, cpu_ms, job_id),
        )

    def record_calls(self, calls: Sequence[ModelCall]) -> None:
        for call in calls:
            values = list(row_values(call))
            values[9] = int(call.estimated)
            self._assist_run(
                f"INSERT INTO model_calls ({CALL_COLUMNS}) VALUES ({_marks(CALL_COLUMNS)}) RETURNING at", values
            )


class AssistStoreSQL:
    """``AssistReads`` over ``_assist_read`` (each backend's tenant store supplies it)."""

    def _assist_read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def links_of(self, scope_key: str, memory_id: str) -> list[LinkRecord]:
        rows = self._assist_read(
            f"SELECT {LINK_COLUMNS} FROM model_links WHERE scope_key = ? AND (from_id = ? OR to_id = ?) "
            "ORDER BY created_at, link_id",
            (scope_key, memory_id, memory_id),
        )
        return [LinkRecord(*r) for r in rows]

    def slots(self, scope_key: str, limit: int) -> list[tuple[str, str]]:
        rows = self._assist_read(
            "SELECT subject_key, kind FROM memories WHERE scope_key = ? AND source = 'MEMORY_FACT' "
            "AND status = 'active' GROUP BY subject_key, kind ORDER BY max(recorded_at) DESC LIMIT ?",
            (scope_key, limit),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def slot_texts(self, scope_key: str, subject_key: str, kind: str, statuses: Sequence[str]) -> list[SlotText]:
        marks = ", ".join("?" for _ in statuses)
        rows = self._assist_read(
            "SELECT memory_id, text, status, status_reason, superseded_by_id FROM memories WHERE scope_key = ? "
            f"AND source = 'MEMORY_FACT' AND subject_key = ? AND kind = ? AND status IN ({marks}) "
            "ORDER BY recorded_at DESC",
            (scope_key, subject_key, kind, *statuses),
        )
        return [SlotText(*r) for r in rows]

    def get_job(self, job_id: str) -> JobRecord | None:
        rows = self._assist_read(f"SELECT {JOB_COLUMNS} FROM model_jobs WHERE job_id = ?", (job_id,))
        return JobRecord(*rows[0]) if rows else None

    def list_jobs(self, *, scope_keys: Sequence[str] | None, state: str | None, limit: int) -> list[JobRecord]:
        sql, params = f"SELECT {JOB_COLUMNS} FROM model_jobs WHERE 1 = 1", []
        if scope_keys is not None:
            if not scope_keys:
                return []
            sql += f" AND scope_key IN ({', '.join('?' for _ in scope_keys)})"
            params += list(scope_keys)
        if state is not None:
            sql += " AND state = ?"
            params.append(state)
        rows = self._assist_read(sql + " ORDER BY created_at DESC, job_id LIMIT ?", [*params, limit])
        return [JobRecord(*r) for r in rows]

    def job_due(self, now: str) -> bool:
        rows = self._assist_read(
            "SELECT 1 FROM model_jobs WHERE state IN ('queued', 'running') AND next_at <= ? LIMIT 1", (now,)
        )
        return bool(rows)

    def model_usage(self, since: str | None) -> list[UsageTotals]:
        where, params = (" WHERE at >= ?", [since]) if since else ("", [])
        rows = self._assist_read(
            "SELECT purpose, count(*), sum(CASE WHEN outcome = 'ok' THEN 0 ELSE 1 END), sum(prompt_tokens), "
            f"sum(completion_tokens), sum(cost), sum(latency_ms) FROM model_calls{where} GROUP BY purpose "
            "ORDER BY purpose",
            params,
        )
        return [
            UsageTotals(str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), float(r[5]), float(r[6])) for r in rows
        ]

    def model_calls(self, limit: int) -> list[ModelCall]:
        rows = self._assist_read(f"SELECT {CALL_COLUMNS} FROM model_calls ORDER BY at DESC LIMIT ?", (limit,))
        return [_call(r) for r in rows]
