"""Backups of a PostgreSQL deployment: ``pg_dump`` of EngramDB's schema, restored by ``pg_restore``.

``pg_dump`` reads in one repeatable-read transaction, so the dump is the schema as of one
instant while the server keeps serving. The tools must match the server's major version (or be
newer): ``pg_bin`` names their folder when the ones on PATH are older. Both tools set their own
statement timeout (none); each run is stopped after an hour instead.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import psycopg

from engramdb.errors import BackendUnavailableError, ConflictError
from engramdb.storage.postgres.sqlstates import translated
from engramdb.storage.postgres.timeouts import StatementTimeouts

DUMP_NAME = "engram.dump"


def _tool(name: str, pg_bin: str | None) -> str:
    found = str(Path(pg_bin) / name) if pg_bin else shutil.which(name)
    if not found or not Path(found).exists():
        raise BackendUnavailableError(
            f"{name} not found; install the PostgreSQL client tools or set ENGRAM_PG_BIN", field="pgBin"
        )
    return found


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "error" in line.lower()] or [done.stderr.strip()]
        raise BackendUnavailableError(f"{Path(command[0]).name} failed: {' | '.join(errors)[:2000]}")


def dump_schema(url: str, schema: str, dest: Path, pg_bin: str | None) -> Path:
    """Dump the schema (custom format) into ``dest``; return the file."""
    target = dest / DUMP_NAME
    _run([_tool("pg_dump", pg_bin), "--format=custom", f"--schema={schema}", f"--file={target}", url])
    return target


def restore_schema(url: str, schema: str, source: Path, pg_bin: str | None) -> None:
    """Restore a dump into a database where the schema does not exist yet."""
    with translated(), psycopg.connect(url, autocommit=True) as conn:
        StatementTimeouts().set_for_session(conn, maintenance=True)  # pg_restore then sets its own
        exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        if exists:
            raise ConflictError(
                f"schema {schema!r} already exists; restore needs a database without it", field="pgSchema"
            )
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # lives outside the schema: not in the dump
    _run(
        [
            _tool("pg_restore", pg_bin),
            "--exit-on-error",
            "--single-transaction",
            f"--dbname={url}",
            str(source / DUMP_NAME),
        ]
    )
