"""Backups of the embedded store: SQLite's online backup API, one consistent file per tenant.

Each tenant file is copied page by page in one read transaction of its own, so the copy is the
tenant as of one instant: every write committed before the copy began is in it, none that was
half done. The server keeps serving: in WAL mode a reader never blocks the writer.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from engramdb.errors import ConflictError
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.result_codes import translated


def copy_tenant(db: Connections, target: Path) -> None:
    """Copy a tenant file into ``target`` (a new file) while it serves."""
    with db.reading() as source, translated():
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)  # all pages in one step: one snapshot
        finally:
            copy.close()


def restore_files(source: Path, home: Path) -> list[str]:
    """Copy backed-up tenant files into an empty home; return the tenant names."""
    tenants = home / "tenants"
    if tenants.exists() and any(tenants.glob("*.sqlite3")):
        raise ConflictError(f"{home} already holds tenants; restore needs an empty home", field="--home")
    tenants.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted((source / "tenants").glob("*.sqlite3")):
        shutil.copyfile(path, tenants / path.name)
        names.append(path.stem)
    return names
