"""A tenant file's schema: created from schema.sql, or brought up to date from an earlier version."""

from __future__ import annotations

import sqlite3
from importlib import resources

from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.sql import (
    CLOSE_SUPERSEDED_SQL,
    FILL_SOURCE_EVENTS_SQL,
    LINK_DERIVATIONS_SQL,
    SOURCE_EVENTS_INDEX_SQL,
)

EPISODES_BY_OBSERVED_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_by_observed ON memories (scope_key, observed_at, rowid) "
    "WHERE source = 'EPISODE'"
)


# Reads that went through a whole table of the tenant (session 45, a 1,000,000-memory tenant), in the
# order they were added: each index by its name, and the statement that makes it.
READ_INDEXES = (
    (  # each page of a fact listing sorted every fact of its scope (100,000 facts walked in 37.5 s)
        "memories_facts_by_recorded",
        "CREATE INDEX IF NOT EXISTS memories_facts_by_recorded ON memories (scope_key, source, recorded_at) "
        "WHERE source = 'MEMORY_FACT'",
    ),
    (  # the re-embedding backlog (/healthz, keyless) counted every ready vector (2 s)
        "memories_by_vector_model",
        "CREATE INDEX IF NOT EXISTS memories_by_vector_model ON memories (embed_model) WHERE embed_state = 'ready'",
    ),
    (
        "record_vectors_by_model",
        "CREATE INDEX IF NOT EXISTS record_vectors_by_model ON record_vectors (embed_model) "
        "WHERE embed_state = 'ready'",
    ),
    (  # the review queue (every dashboard page counts it) read every fact (236-353 ms)
        "memories_pending_review",
        "CREATE INDEX IF NOT EXISTS memories_pending_review ON memories (recorded_at) "
        "WHERE source = 'MEMORY_FACT' AND status = 'pending_review'",
    ),
    (  # a slot's tombstones, lifted ones too (a fact's history, a deletion's), read every tombstone
        "tombstones_by_slot",
        "CREATE INDEX IF NOT EXISTS tombstones_by_slot ON tombstones (scope_key, subject_key, kind, created_at)",
    ),
    (  # the audit log by a target's id alone (?targetId=, a fact's timeline) walked the whole log
        "audit_log_by_target_id",
        "CREATE INDEX IF NOT EXISTS audit_log_by_target_id ON audit_log (target_id, seq)",
    ),
    (  # a participant's scopes (its export, its erasure) read every memory and record of the tenant
        "scopes_by_participant",
        "CREATE INDEX IF NOT EXISTS scopes_by_participant ON scopes (participant_scope_hash)",
    ),
    (  # a scope's schema joined every value to its record and sorted them (1.8 s at 850,000 values)
        "record_values_catalog",
        "CREATE INDEX IF NOT EXISTS record_values_catalog ON record_values (scope_key, label, name, kind, record)",
    ),
    (  # a write into a fact slot read every retired version of it (about 60 ms at 10,000, in the write lock)
        "memories_slot_starts",
        "CREATE INDEX IF NOT EXISTS memories_slot_starts ON memories "
        "(scope_key, subject_key, kind, status, valid_from) WHERE source = 'MEMORY_FACT'",
    ),
    (
        "memories_slot_ends",
        "CREATE INDEX IF NOT EXISTS memories_slot_ends ON memories "
        "(scope_key, subject_key, kind, status, invalid_at, valid_until) WHERE source = 'MEMORY_FACT'",
    ),
)


def migrate(db: Connections) -> None:
    """Create the schema in a new file, or upgrade the schema of an existing one."""
    if db.fetchone("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"):
        _upgrade(db)
        return
    script = _script("schema.sql") + _script("knowledge.sql") + _script("assist.sql") + _script("usage.sql")
    script += _script("feed.sql") + _script("scope_activity.sql")
    with db.write() as conn:
        # Another process may have created it between our check and our lock.
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
            for statement in _statements(script):
                conn.execute(statement)


def _script(name: str) -> str:
    return resources.files("engramdb.storage.sqlite").joinpath(name).read_text()


def _upgrade(db: Connections) -> None:
    """Bring a file made by an earlier version up to the current schema."""
    if db.fetchone("SELECT 1 FROM sqlite_master WHERE name='memories_fts'"):
        with db.write() as conn:  # FTS5 ranked text before the in-memory index did
            conn.execute("DROP TABLE IF EXISTS memories_fts")
    if "invalid_at" not in _memory_columns(db):
        with db.write() as conn:  # superseded facts did not record where they stop holding
            if "invalid_at" not in {r[1] for r in conn.execute("PRAGMA table_info(memories)")}:
                conn.execute("ALTER TABLE memories ADD COLUMN invalid_at TEXT")
                conn.execute(CLOSE_SUPERSEDED_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='memories_by_observed'"):
        with db.write() as conn:  # episodes were listed only through recall
            conn.execute(EPISODES_BY_OBSERVED_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='records'"):
        with db.write() as conn:  # before the knowledge plane
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name='records'").fetchone():
                for statement in _statements(_script("knowledge.sql")):
                    conn.execute(statement)
    if "source_event_id" not in _memory_columns(db):
        with db.write() as conn:  # facts named their episode only inside the event
            if "source_event_id" not in {r[1] for r in conn.execute("PRAGMA table_info(memories)")}:
                conn.execute("ALTER TABLE memories ADD COLUMN source_event_id TEXT")
                conn.execute(FILL_SOURCE_EVENTS_SQL)
                conn.execute(SOURCE_EVENTS_INDEX_SQL)
                conn.execute(LINK_DERIVATIONS_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='model_jobs'"):
        with db.write() as conn:  # before model-assisted memory (IF NOT EXISTS: another process may race)
            for statement in _statements(_script("assist.sql")):
                conn.execute(statement)
    _upgrade_audit_and_after(db)


def _upgrade_audit_and_after(db: Connections) -> None:
    """The steps since audit reasons became erasable, in the order they were made."""
    if "reason_digest" not in {r[1] for r in db.fetchall("PRAGMA table_info(audit_log)")}:
        with db.write() as conn:  # audit reasons were chained as text, so they could not be erased
            if "reason_digest" not in {r[1] for r in conn.execute("PRAGMA table_info(audit_log)")}:
                conn.execute("ALTER TABLE audit_log ADD COLUMN reason_digest TEXT")
                conn.execute("ALTER TABLE audit_log ADD COLUMN reason_nonce TEXT")
                conn.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
                for statement in _statements(_script("schema.sql")):
                    if statement.startswith("CREATE TRIGGER audit_log_no_update") or statement.startswith(
                        "CREATE TRIGGER audit_log_erase_only"
                    ):
                        conn.execute(statement)

    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='audit_log_by_target'"):
        with db.write() as conn:  # verification found the entries about a row by reading them all
            conn.execute(AUDIT_BY_TARGET_SQL)
    if "pinned" not in _memory_columns(db):
        with db.write() as conn:  # nothing aged: no importance, pins or use counts
            if "pinned" not in {r[1] for r in conn.execute("PRAGMA table_info(memories)")}:
                for column in AGING_COLUMNS:
                    conn.execute(f"ALTER TABLE memories ADD COLUMN {column}")
                conn.execute(RECORDED_INDEX_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='memories_current_facts'"):
        with db.write() as conn:  # structured fact search read the rows themselves
            conn.execute(CURRENT_FACTS_INDEX_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='memories_by_id'"):
        with db.write() as conn:  # a memory was found by id only within its scope
            conn.execute(BY_ID_INDEX_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='usage_hourly'"):
        with db.write() as conn:  # usage was not kept over time (IF NOT EXISTS: another process may race)
            for statement in _statements(_script("usage.sql")):
                conn.execute(statement)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='webhook_deliveries_next'"):
        _add_feed(db)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='memories_by_scope_stats'"):
        with db.write() as conn:  # a scope's counts read every row of the table, vectors and all
            conn.execute(SCOPE_STATS_INDEX_SQL)
    if "source" not in _index_columns(db, "memories_by_source_event"):
        with db.write() as conn:  # a fact's episode was looked for through every fact of its sourceEventId
            if "source" not in {r[2] for r in conn.execute("PRAGMA index_info(memories_by_source_event)")}:
                conn.execute("DROP INDEX IF EXISTS memories_by_source_event")
                conn.execute(SOURCE_EVENTS_INDEX_SQL)
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='audit_log_by_scope'"):
        with db.write() as conn:  # a scope's change feed read every other scope's entries after its cursor
            conn.execute(AUDIT_BY_SCOPE_SQL)
    if "merge_identity" not in {r[1] for r in db.fetchall("PRAGMA table_info(records)")}:
        with db.write() as conn:  # a PATCH could not tell which properties made a record's merge key
            if "merge_identity" not in {r[1] for r in conn.execute("PRAGMA table_info(records)")}:
                conn.execute("ALTER TABLE records ADD COLUMN merge_identity TEXT")
    if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name='scopes_by_agent'"):
        with db.write() as conn:  # listing scopes read every memory (IF NOT EXISTS: another process may race)
            for statement in _statements(_script("scope_activity.sql")):
                conn.execute(statement)
    for name, statement in READ_INDEXES:
        if not db.fetchone("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)):
            with db.write() as conn:
                conn.execute(statement)


def _add_feed(db: Connections) -> None:
    """Before the change feed and its webhooks: their tables, and the names of the scopes written so far."""
    with db.write() as conn:  # IF NOT EXISTS and OR IGNORE: another process may race
        for statement in _statements(_script("feed.sql")):
            conn.execute(statement)


AUDIT_BY_TARGET_SQL = "CREATE INDEX IF NOT EXISTS audit_log_by_target ON audit_log (target_kind, target_id, seq)"
AUDIT_BY_SCOPE_SQL = "CREATE INDEX IF NOT EXISTS audit_log_by_scope ON audit_log (scope_key, seq)"
AGING_COLUMNS = ("importance REAL", "pinned INTEGER DEFAULT 0", "use_count INTEGER DEFAULT 0", "last_used_at TEXT")
BY_ID_INDEX_SQL = "CREATE INDEX IF NOT EXISTS memories_by_id ON memories (memory_id)"
SCOPE_STATS_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_by_scope_stats ON memories (scope_key, agent_id, profile_id, "
    "privacy_scope, participant_scope_hash, sandbox_eligible, source, status, recorded_at)"
)
RECORDED_INDEX_SQL = "CREATE INDEX IF NOT EXISTS memories_by_recorded ON memories (recorded_at) WHERE status = 'active'"
CURRENT_FACTS_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS memories_current_facts ON memories "
    "(scope_key, recorded_at, subject_key, valid_until, source_event_id) "
    "WHERE source = 'MEMORY_FACT' AND status = 'active'"
)


def _memory_columns(db: Connections) -> set[str]:
    return {r[1] for r in db.fetchall("PRAGMA table_info(memories)")}


def _index_columns(db: Connections, index: str) -> set[str]:
    return {r[2] for r in db.fetchall(f"PRAGMA index_info({index})")}


def _statements(script: str) -> list[str]:
    """Split a schema script into statements, keeping trigger bodies whole."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements
