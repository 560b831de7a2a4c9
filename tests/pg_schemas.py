"""Migrated PostgreSQL schemas for the tests' stores, emptied after a test and used again.

A fresh schema costs the server ~150 ms of CPU (its migrations), and ~600 tests run on
PostgreSQL; emptying a used one costs ~20 ms. A schema is used again only if its shape (relations,
columns in order, indexes, constraints, statistics, sequences, types, policies, triggers, functions,
grants, default privileges, applied migrations) is what it was when it was fresh and nothing holds
a lock on it; any other is dropped.

Emptied is not fresh: the deleted rows' index entries and pages stay (a TRUNCATE, which would free
them, costs 160-230 ms a schema), and PostgreSQL's plans weigh an index by its pages. A test that
checks a plan asks for a new schema (``fresh``), as a new store's would be.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:
    from engramdb.storage.postgres.store import PostgresStore

# Everything a test could change about a schema besides its rows, as sorted text rows.
SHAPE = """
SELECT 'relation', c.relname, c.relkind::text || c.relpersistence::text || c.relreplident::text,
       c.relrowsecurity::text || c.relforcerowsecurity::text,
       coalesce(c.relacl::text, ''), coalesce(array_to_string(c.reloptions, ','), '')
  FROM pg_class c WHERE c.relnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'column', c.relname, a.attnum || ' ' || a.attname,
       format_type(a.atttypid, a.atttypmod) || a.attnotnull::text || a.attidentity::text
       || coalesce(a.attstattarget::text, ''),
       coalesce(pg_get_expr(d.adbin, d.adrelid), ''), coalesce(a.attacl::text, '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE c.relnamespace = %(s)s::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'index', c.relname, pg_get_indexdef(c.oid), '', '', ''
  FROM pg_class c WHERE c.relnamespace = %(s)s::regnamespace AND c.relkind = 'i'
UNION ALL
SELECT 'constraint', conname, pg_get_constraintdef(oid), '', '', '' FROM pg_constraint
 WHERE connamespace = %(s)s::regnamespace
UNION ALL
SELECT 'policy', p.polname, c.relname, p.polcmd::text || p.polpermissive::text,
       coalesce(pg_get_expr(p.polqual, p.polrelid), '') || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), ''),
       p.polroles::text
  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'trigger', t.tgname, pg_get_triggerdef(t.oid), t.tgenabled::text, '', ''
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE c.relnamespace = %(s)s::regnamespace AND NOT t.tgisinternal
UNION ALL
SELECT 'function', p.proname, pg_get_functiondef(p.oid), coalesce(p.proacl::text, ''), '', ''
  FROM pg_proc p WHERE p.pronamespace = %(s)s::regnamespace
UNION ALL
SELECT 'statistics', stxname, pg_get_statisticsobjdef(oid), '', '', '' FROM pg_statistic_ext
 WHERE stxnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'sequence', c.relname, concat_ws(' ', q.seqstart, q.seqincrement, q.seqmin, q.seqmax, q.seqcache, q.seqcycle),
       '', '', ''
  FROM pg_sequence q JOIN pg_class c ON c.oid = q.seqrelid WHERE c.relnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'type', typname, typtype::text, '', '', '' FROM pg_type WHERE typnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'default privileges', defaclobjtype::text, defaclacl::text, '', '', '' FROM pg_default_acl
 WHERE defaclnamespace = %(s)s::regnamespace
UNION ALL
SELECT 'schema', nspname, coalesce(nspacl::text, ''), '', '', '' FROM pg_namespace WHERE oid = %(s)s::regnamespace
"""
TABLES = "SELECT relname FROM pg_class WHERE relnamespace = %s::regnamespace AND relkind = 'r' ORDER BY relname"
RESTART = """SELECT setval(format('%%I.%%I', schemaname, sequencename)::regclass, start_value, false)
  FROM pg_sequences WHERE schemaname = %s"""


class SchemaPool:
    """One test process's schemas on the session's server: ``open`` a store on one, ``give_back`` it after."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._free: list[str] = []
        self._shapes: dict[str, list[tuple[str, ...]]] = {}  # each schema's shape when it was fresh

    def open(self, *, fresh: bool = False, **options: Any) -> PostgresStore:
        """A store (``options`` as PostgresStore takes them) on an empty migrated schema: a used one, or a
        new one the store migrates (always, when ``fresh``), whose shape is then recorded."""
        from engramdb.storage.postgres.store import PostgresStore

        schema, fresh = self.take(fresh=fresh)
        store = PostgresStore(self.url, schema=schema, **options)
        if fresh:
            self.learn(schema)
        return store

    def take(self, *, fresh: bool = False) -> tuple[str, bool]:
        """A schema name, and whether it is new (the store migrates it: then call ``learn``)."""
        if self._free and not fresh:
            return self._free.pop(), False
        return f"t_{uuid.uuid4().hex[:12]}", True

    def learn(self, schema: str) -> None:
        """Record a freshly migrated schema's shape, which it must keep to be used again."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            self._shapes[schema] = _shape(conn, schema)

    def give_back(self, schema: str) -> None:
        """Empty ``schema`` for the next test, or drop it if it changed or is still in use."""
        if schema not in self._shapes:
            return  # never learned (the store failed to open): leave it as it is
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("SET lock_timeout = '2s'")  # reading the shape opens the tables too
            try:
                if _shape(conn, schema) != self._shapes[schema]:
                    raise ValueError(f"schema {schema} changed shape")
                with conn.transaction():
                    conn.execute("SET LOCAL session_replication_role = replica")  # no triggers: the audit log too
                    for (table,) in conn.execute(TABLES, (schema,)).fetchall():
                        if table != "schema_migrations":
                            conn.execute(f'DELETE FROM {schema}."{table}"')
                    conn.execute(RESTART, (schema,))
            except (psycopg.Error, ValueError):
                self._shapes.pop(schema)
                with contextlib.suppress(psycopg.Error):  # still locked: left to the session's end
                    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                return
        self._free.append(schema)


def _shape(conn: psycopg.Connection, schema: str) -> list[tuple[str, ...]]:
    rows = conn.execute(SHAPE, {"s": schema}).fetchall()
    migrations = conn.execute(f"SELECT 'migration', name, '', '', '', '' FROM {schema}.schema_migrations").fetchall()
    return sorted(tuple(str(v) for v in row) for row in [*rows, *migrations])
