"""PostgreSQL + pgvector: all tenants in one schema, isolated by row-level security.

Every unit of work runs in a transaction that first sets ``engram.tenant``; the connections act
as the role ``engram_app`` (no superuser, no BYPASSRLS), so the database itself keeps a tenant's
rows out of every other tenant's queries, including a query that forgets to filter.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool

from engramdb import clock
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.storage.port import check_tenant_name
from engramdb.storage.postgres import migrating
from engramdb.storage.postgres.backup import dump_schema
from engramdb.storage.postgres.searches import SearchPlaces
from engramdb.storage.postgres.sqlstates import translated
from engramdb.storage.postgres.tenant import PostgresTenantStore
from engramdb.storage.postgres.timeouts import MAINTENANCE_SECONDS, REQUEST_SECONDS, StatementTimeouts, maintenance
from engramdb.storage.scope_cache import FRESHEN_SCOPES, ScopeCache, freshen
from engramdb.storage.vector_index import AnnSettings

log = logging.getLogger(__name__)


BEGINS_KEPT = 4096  # the texts of `_begin` kept, one per tenant (and statement timeout)


def _begin(settings: tuple[tuple[str, str], ...]) -> sql.Composed:
    """``BEGIN`` and each setting for the transaction alone (``set_config(..., true)``), in one text:
    with no parameters psycopg sends it as a simple query, whose statements run in one round trip.
    The values are quoted as literals."""
    calls = sql.SQL(", ").join(
        sql.SQL("set_config({}, {}, true)").format(sql.Literal(name), sql.Literal(value)) for name, value in settings
    )
    return sql.SQL("BEGIN; SELECT {}").format(calls)


# Every file of the migrations folder, in name order: a migration cannot be written and forgotten here.
MIGRATIONS = tuple(
    sorted(
        entry.name
        for entry in resources.files("engramdb.storage.postgres.migrations").iterdir()
        if entry.name.endswith(".sql")
    )
)
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PostgresStore:
    """All tenants of a PostgreSQL deployment."""

    def __init__(
        self,
        url: str,
        *,
        schema: str = "engram",
        max_connections: int = 8,
        memory_mb: float = 1024,
        ann_min_rows: int = 200_000,
        ann_probe_share: float = 0.05,
        copy_min_rows: int = 10_000,
        statement_timeout: float = REQUEST_SECONDS,
        maintenance_timeout: float = MAINTENANCE_SECONDS,
        search_connections: int = 2,
    ) -> None:
        """``copy_min_rows``: a scope holding this many memories is answered from an in-memory
        copy (storage/postgres/search.py); ``memory_mb`` bounds those copies; ``ann_min_rows`` and
        ``ann_probe_share`` say when a copy's vector arm turns approximate and what it scans then.
        ``statement_timeout`` and ``maintenance_timeout`` (seconds) bound every statement
        (storage/postgres/timeouts.py); where-queries hold at most ``search_connections`` of the
        ``max_connections`` at once, one scope's at most half of them (storage/postgres/searches.py)."""
        if not _SCHEMA.fullmatch(schema):
            raise InvalidInputError("schema names are lower-case letters, digits and _", field="schema")
        self.url = url
        self.schema = schema
        self.timeouts = StatementTimeouts(statement_timeout, maintenance_timeout)
        self.searches = SearchPlaces(min(search_connections, max_connections - 1), wait=statement_timeout)
        self.scope_copies = ScopeCache(
            max_bytes=int(memory_mb * 2**20), ann=AnnSettings(min_rows=ann_min_rows, probe_share=ann_probe_share)
        )
        self.copy_min_rows = copy_min_rows
        self._migrate()
        with translated():
            self._pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max_connections,
                configure=self._configure,
                open=True,
                kwargs={"autocommit": True},
            )
        self._tenants: dict[str, PostgresTenantStore] = {}
        self._lock = threading.Lock()
        self._begins: dict[tuple[tuple[str, str], ...], bytes] = {}

    def _configure(self, conn: psycopg.Connection) -> None:
        register_vector(conn)
        conn.execute("SET ROLE engram_app")  # from here on, row-level security binds us
        conn.execute(f"SET search_path TO {self.schema}, public")
        self.timeouts.set_for_session(conn)

    def _migrate(self) -> None:
        with translated(), psycopg.connect(self.url, autocommit=True) as conn:
            self.timeouts.set_for_session(conn, maintenance=True)
            migrating.take_lock(conn)
            try:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.schema}.schema_migrations "
                    "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
                )
                done = {r[0] for r in conn.execute(f"SELECT name FROM {self.schema}.schema_migrations")}
                for name in MIGRATIONS:
                    if name in done:
                        continue
                    text = resources.files("engramdb.storage.postgres.migrations").joinpath(name).read_text()
                    migrating.apply(conn, self.schema, name, text)
                    log.info("applied migration %s to schema %s", name, self.schema)
            finally:
                migrating.release_lock(conn)

    @contextmanager
    def connection(self, tenant: str) -> Iterator[psycopg.Connection]:
        """A pooled connection inside a transaction bound to ``tenant`` (and, in maintenance work, to
        the maintenance statement timeout: ``SET LOCAL``, so it ends with the transaction).

        ``BEGIN`` and the settings go to the server as one message, one round trip where
        ``conn.transaction()`` and a parameterised ``set_config`` took two. Nothing in the block may call
        ``conn.commit()`` or ``conn.rollback()``: the rest of the block would run outside the unit."""
        settings: tuple[tuple[str, str], ...] = (("engram.tenant", tenant),)
        if self.timeouts.is_maintenance():
            settings += (("statement_timeout", self.timeouts.current()),)
        with translated(), self._pool.connection() as conn:
            begin = self._begins.get(settings)
            if begin is None:  # quoted once: building and quoting it took a tenth of a short unit of work
                if len(self._begins) >= BEGINS_KEPT:
                    self._begins.clear()
                begin = self._begins[settings] = _begin(settings).as_bytes(conn)
            conn.execute(begin)
            yield conn  # the pool's block commits it, or rolls it back on an error, and gives the connection back

    def maintain(self) -> None:
        # As the URL's user (the tables' owner): the engram_app role may not vacuum them.
        with translated(), psycopg.connect(self.url, autocommit=True) as conn:
            self.timeouts.set_for_session(conn, maintenance=True)
            for table in (
                "memories",
                "tombstones",
                "audit_log",
                "records",
                "record_values",
                "relationships",
                "record_history",
                "record_vectors",
            ):
                conn.execute(f"VACUUM (ANALYZE) {self.schema}.{table}")

    def backup(self, dest: Path, *, pg_bin: str | None = None) -> None:
        """Dump EngramDB's schema (every tenant) with pg_dump, as of one instant, into ``dest``."""
        dest.mkdir(parents=True, exist_ok=True)
        dump_schema(self.url, self.schema, dest, pg_bin)

    def rewrite_tables(self) -> None:
        """Rewrite every table that holds text (VACUUM FULL), so deleted rows leave the heap files,
        the TOAST tables and the indexes (a plain VACUUM only marks their space reusable), and
        gather its planner statistics again (ANALYZE), so no histogram or common value in
        pg_statistic still quotes them. It locks each table while it runs; erasures are rare."""
        with translated(), psycopg.connect(self.url, autocommit=True) as conn:
            self.timeouts.set_for_session(conn, maintenance=True)
            for table in (
                "memories",
                "tombstones",
                "audit_log",
                "records",
                "record_values",
                "relationships",
                "record_history",
                "record_vectors",
                "model_links",
                "model_jobs",
                "model_calls",
            ):
                conn.execute(f"VACUUM (FULL, ANALYZE) {self.schema}.{table}")

    def freshen(self, stop: Callable[[], bool] = lambda: False) -> int:
        return freshen(self.scope_copies, FRESHEN_SCOPES, stop)

    def warm(self, stop: Callable[[], bool] = lambda: False, vector_model: str | None = None) -> list[tuple[str, str]]:
        """Load the copies of the large scopes (``copy_min_rows`` memories or more), the most
        recently written first, until the memory limit is nearly full. (The database's own
        cache survives a restart of this server; only the copies are in its memory.)"""
        with maintenance():  # a large scope's copy is read whole
            return self._warm(stop, vector_model)

    def _warm(self, stop: Callable[[], bool], vector_model: str | None) -> list[tuple[str, str]]:
        warmed: list[tuple[str, str]] = []
        for name in self.tenant_names():
            tenant = self.tenant(name)
            with self.connection(name) as conn:
                large = [
                    r[0]
                    for r in conn.execute(
                        "SELECT scope_key FROM memories WHERE tenant = %s GROUP BY scope_key HAVING count(*) >= %s "
                        "ORDER BY max(change_seq) DESC",
                        (name, self.copy_min_rows),
                    )
                ]
            for scope_key in large:
                if stop() or self.scope_copies.nbytes >= 0.9 * self.scope_copies.max_bytes:
                    return warmed
                tenant._search.warm(scope_key, vector_model)
                warmed.append((name, scope_key))
        return warmed

    def tenant(self, name: str, *, create: bool = False) -> PostgresTenantStore:
        check_tenant_name(name)
        with self._lock:
            store = self._tenants.get(name)
            if store is not None:
                return store
        if not self._exists(name):
            if not create:
                raise NotFoundError(f"no tenant named {name!r}", field="tenant")
            self._create(name)
        with self._lock:
            return self._tenants.setdefault(name, PostgresTenantStore(self, name))

    def _exists(self, name: str) -> bool:
        with self.connection(name) as conn:
            return conn.execute("SELECT 1 FROM tenants WHERE name = %s", (name,)).fetchone() is not None

    def _create(self, name: str) -> None:
        with self.connection(name) as conn:
            conn.execute(
                "INSERT INTO tenants (name, created_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (name, clock.now_text()),
            )
            conn.execute(  # a new tenant's rows are covered by the audit's digests from its first write
                "INSERT INTO meta (tenant, key, value) VALUES (%s, 'change_seq', '0'), (%s, 'audit_digests', '2') "
                "ON CONFLICT DO NOTHING",
                (name, name),
            )

    def tenant_names(self) -> list[str]:
        with self.connection("") as conn:
            return [r[0] for r in conn.execute("SELECT name FROM tenants ORDER BY name")]

    def close(self) -> None:
        with translated():
            self._pool.close()
