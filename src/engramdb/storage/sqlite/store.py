"""The embedded store: one SQLite file per tenant under ``<home>/tenants/``."""

from __future__ import annotations

import threading
from pathlib import Path

from engramdb.errors import NotFoundError
from engramdb.storage.port import check_tenant_name
from engramdb.storage.sqlite.backup import copy_tenant
from engramdb.storage.sqlite.connection import DEFAULT_BUSY_TIMEOUT
from engramdb.storage.sqlite.scope_copy import ScopeCache
from engramdb.storage.sqlite.tenant import SQLiteTenantStore


class SQLiteStore:
    """All tenants of an embedded deployment. Tenants never share a file or a connection."""

    def __init__(
        self, home: Path, *, synchronous: str = "NORMAL", max_cached_vectors: int = 2_000_000,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:  # fmt: skip
        """``busy_timeout`` is how many seconds a write waits for another process's write lock
        before it fails with BackendUnavailableError."""
        self.home = home
        self._dir = home / "tenants"
        self._dir.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        self._busy_timeout = busy_timeout
        self._cache = ScopeCache(max_rows=max_cached_vectors)
        self._tenants: dict[str, SQLiteTenantStore] = {}
        self._lock = threading.Lock()

    def tenant(self, name: str, *, create: bool = False) -> SQLiteTenantStore:
        check_tenant_name(name)
        with self._lock:
            store = self._tenants.get(name)
            if store is not None:
                return store
            path = self._dir / f"{name}.sqlite3"
            if not create and not path.exists():
                raise NotFoundError(f"no tenant named {name!r}", field="tenant")
            store = SQLiteTenantStore(path, cache=self._cache, synchronous=self._synchronous,
                                      busy_timeout=self._busy_timeout)  # fmt: skip
            self._tenants[name] = store
            return store

    def tenant_names(self) -> list[str]:
        return sorted(p.stem for p in self._dir.glob("*.sqlite3"))

    def backup(self, dest: Path, *, pg_bin: str | None = None) -> None:
        """Copy every tenant, each as of one instant, into ``dest/tenants`` (the server may serve)."""
        (dest / "tenants").mkdir(parents=True, exist_ok=True)
        for name in self.tenant_names():
            copy_tenant(self.tenant(name).connections, dest / "tenants" / f"{name}.sqlite3")

    def maintain(self) -> None:
        for name in self.tenant_names():
            self.tenant(name).optimize()

    def close(self) -> None:
        with self._lock:
            for store in self._tenants.values():
                store.close()
            self._tenants.clear()
            self._cache.clear()
