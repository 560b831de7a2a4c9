"""Applying one migration file to a schema: in a transaction, or index by index without one.

An index built by ``CREATE INDEX`` holds a lock that every write to its table waits behind, from the
moment it is asked for until the build ends: on a large table an upgrade stopped the server's writes
for the whole build. A file whose statements are all ``CREATE INDEX CONCURRENTLY IF NOT EXISTS`` is
applied statement by statement outside a transaction instead (PostgreSQL refuses ``CONCURRENTLY`` in
one), and writes go on meanwhile; unless its tables are all small (a new schema's), where a build in
the transaction takes milliseconds and waits for nobody (a concurrent build waits for every older
transaction of the database to end). A concurrent build cut short (a crash, a timeout) leaves its index
invalid and the file unrecorded: the next start drops that index and builds it again (``IF NOT
EXISTS`` alone would keep the invalid one, which no read uses).

Servers starting at once take turns migrating (an advisory lock). A server waits for its turn by
asking again and again, not in one waiting statement: such a statement holds a snapshot, which the
concurrent build of the server migrating waits to end, while it waits for the lock that server holds
(PostgreSQL called it a deadlock and cancelled the build, and that server failed to start).
"""

from __future__ import annotations

import logging
import re
import time
from typing import NamedTuple

import psycopg

from engramdb import clock

log = logging.getLogger(__name__)
_LOCK = "hashtext('engramdb-migrations')"
_CONCURRENT = re.compile(r"CREATE INDEX CONCURRENTLY IF NOT EXISTS (\w+) ON ([\w.]+)", re.IGNORECASE)
SMALL_TABLE_BYTES = 8 * 2**20  # a table up to this size takes its indexes in the migration's transaction


class _Build(NamedTuple):
    name: str
    table: str
    statement: str


def take_lock(conn: psycopg.Connection, poll_seconds: float = 0.2, say_every: float = 30.0) -> None:
    """Wait for this database's migration turn (``conn`` in autocommit), asking every ``poll_seconds``;
    say so in the log at once, and every ``say_every`` seconds while it waits (another server's index
    build may take long)."""
    started, said = time.monotonic(), None
    while True:
        row = conn.execute(f"SELECT pg_try_advisory_lock({_LOCK})").fetchone()
        if row and row[0]:
            return
        now = time.monotonic()
        if said is None or now - said >= say_every:
            log.info("waiting for another server's migration of this database (%.0f s so far)", now - started)
            said = now
        time.sleep(poll_seconds)


def release_lock(conn: psycopg.Connection) -> None:
    conn.execute(f"SELECT pg_advisory_unlock({_LOCK})")


def statements(text: str) -> list[str]:
    """The file's statements, without their comment lines (a ``;`` ends a statement at a line's end)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    parts = (s.strip().rstrip(";").rstrip() for s in "\n".join(lines).split(";\n"))
    return [part for part in parts if part]


def concurrent_builds(text: str) -> list[_Build]:
    """Each statement's index, table and text when every one builds an index concurrently, else []."""
    found = [(_CONCURRENT.match(s), s) for s in statements(text)]
    if not found or not all(m for m, _ in found):
        return []
    return [_Build(m.group(1), m.group(2), s) for m, s in found if m]


def apply(conn: psycopg.Connection, schema: str, name: str, text: str, *, small_table_bytes: int | None = None) -> None:
    """Apply migration ``name`` (its ``text``, ``{schema}`` not yet filled) and record it, on ``conn``
    (in autocommit: each transaction here is its own); ``small_table_bytes``: ``SMALL_TABLE_BYTES``."""
    text = text.replace("{schema}", schema)
    builds = concurrent_builds(text)
    small = SMALL_TABLE_BYTES if small_table_bytes is None else small_table_bytes
    if not builds or all(_bytes(conn, b.table) <= small for b in builds):
        with conn.transaction():
            _drop_invalid(conn, schema, builds, "")
            conn.execute(re.sub(r"\bCONCURRENTLY\s+", "", text, flags=re.IGNORECASE) if builds else text)
            _record(conn, schema, name)
        return
    _drop_invalid(conn, schema, builds, "CONCURRENTLY ")
    # A build takes as long as its table needs (and waits for the database's older transactions): under
    # the session's statement timeout a build longer than it was cancelled at every start, and redone.
    row = conn.execute("SHOW statement_timeout").fetchone()
    conn.execute("SELECT set_config('statement_timeout', '0', false)")
    try:
        for build in builds:
            log.info("building index %s of %s concurrently (writes go on meanwhile)", build.name, build.table)
            conn.execute(build.statement)
    finally:
        conn.execute("SELECT set_config('statement_timeout', %s, false)", (row[0] if row else "0",))
    _record(conn, schema, name)


def _drop_invalid(conn: psycopg.Connection, schema: str, builds: list[_Build], how: str) -> None:
    """Drop the indexes of ``builds`` that a build cut short left invalid (``how``: "" or "CONCURRENTLY ")."""
    for build in builds:
        if _invalid(conn, schema, build.name):
            conn.execute(f"DROP INDEX {how}IF EXISTS {schema}.{build.name}")


def _bytes(conn: psycopg.Connection, table: str) -> int:
    row = conn.execute("SELECT pg_relation_size(%s::regclass)", (table,)).fetchone()
    return int(row[0]) if row else 0


def _invalid(conn: psycopg.Connection, schema: str, index: str) -> bool:
    row = conn.execute(
        "SELECT NOT indisvalid FROM pg_index WHERE indexrelid = to_regclass(%s)", (f"{schema}.{index}",)
    ).fetchone()
    return bool(row and row[0])


def _record(conn: psycopg.Connection, schema: str, name: str) -> None:
    conn.execute(f"INSERT INTO {schema}.schema_migrations VALUES (%s, %s)", (name, clock.now_text()))
