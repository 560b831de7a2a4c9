"""URL scheme -> storage backend.

``sqlite:///relative/home`` and ``sqlite:////absolute/home`` (SQLAlchemy's convention) name the
folder that holds one SQLite file per tenant: the embedded default. ``postgresql://...`` names a
PostgreSQL database (with pgvector); ``schema`` picks the schema EngramDB keeps its tables in.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from engramdb.errors import InvalidInputError
from engramdb.storage.port import Store


def open_store(url: str, **options: object) -> Store:
    """Return the store a database URL names."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from engramdb.storage.sqlite.store import SQLiteStore

        # The options are SQLiteStore's own keyword arguments; an unknown one fails on the call.
        return SQLiteStore(Path(parsed.path[1:] or "."), **options)  # type: ignore[arg-type]  # typed there
    if parsed.scheme in ("postgresql", "postgres"):
        from engramdb.storage.postgres.store import PostgresStore

        return PostgresStore(url, **options)  # type: ignore[arg-type]  # typed there
    raise InvalidInputError(f"unsupported database URL scheme {parsed.scheme!r}", field="databaseUrl")


def restore_backup(url: str, source: Path, *, schema: str = "engram", pg_bin: str | None = None) -> str:
    """Restore a backup folder (``engram backup``) into the empty store a URL names; return the backend."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from engramdb.storage.sqlite.backup import restore_files

        if not (source / "tenants").is_dir():
            raise InvalidInputError(f"{source} holds no SQLite backup (no tenants folder)", field="source")
        restore_files(source, Path(parsed.path[1:] or "."))
        return "sqlite"
    if parsed.scheme in ("postgresql", "postgres"):
        from engramdb.storage.postgres.backup import DUMP_NAME, restore_schema

        if not (source / DUMP_NAME).is_file():
            raise InvalidInputError(f"{source} holds no PostgreSQL backup ({DUMP_NAME})", field="source")
        restore_schema(url, schema, source, pg_bin)
        return "postgresql"
    raise InvalidInputError(f"unsupported database URL scheme {parsed.scheme!r}", field="databaseUrl")
