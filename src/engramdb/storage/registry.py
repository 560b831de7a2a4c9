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
