"""The embedded store: one SQLite file per tenant under ``<home>/tenants/``."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engramdb.errors import BackendUnavailableError, NotFoundError
from engramdb.storage.port import check_tenant_name
from engramdb.storage.scope_cache import FRESHEN_SCOPES, RECENT_LISTED, ScopeCache, freshen, load_written
from engramdb.storage.sqlite.backup import copy_tenant
from engramdb.storage.sqlite.connection import DEFAULT_BUSY_TIMEOUT
from engramdb.storage.sqlite.tenant import SQLiteTenantStore
from engramdb.storage.vector_index import AnnSettings

log = logging.getLogger(__name__)


class SQLiteStore:
    """All tenants of an embedded deployment. Tenants never share a file or a connection."""

    def __init__(
        self,
        home: Path,
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        memory_mb: float = 1024,
        ann_min_rows: int = 200_000,
        ann_probe_share: float = 0.05,
    ) -> None:
        """``busy_timeout`` is how many seconds a write waits for another process's write lock
        before it fails with BackendUnavailableError; ``memory_mb`` bounds the scope copies held in
        memory; ``ann_min_rows`` and ``ann_probe_share`` say when a scope's vector arm turns
        approximate and what it scans then."""
        self.home = home
        self._dir = home / "tenants"
        self._dir.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous
        self._busy_timeout = busy_timeout
        self.scope_copies = ScopeCache(
            max_bytes=int(memory_mb * 2**20), ann=AnnSettings(min_rows=ann_min_rows, probe_share=ann_probe_share)
        )
        self._tenants: dict[str, SQLiteTenantStore] = {}
        self._lock = threading.Lock()
        self._closed = False  # a job still running at shutdown must not open a tenant again
        self._recent_file = home / "recent-scopes.json"
        self._remembered = 0.0
        self.scope_copies.on_load = self._remember

    def tenant(self, name: str, *, create: bool = False) -> SQLiteTenantStore:
        check_tenant_name(name)
        with self._lock:
            if self._closed:
                raise BackendUnavailableError("the store is closed: the server is stopping")
            store = self._tenants.get(name)
            if store is not None:
                return store
            path = self._dir / f"{name}.sqlite3"
            if not create and not path.exists():
                raise NotFoundError(f"no tenant named {name!r}", field="tenant")
            store = SQLiteTenantStore(
                path, cache=self.scope_copies, synchronous=self._synchronous, busy_timeout=self._busy_timeout
            )
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

    def warm(self, stop: Callable[[], bool] = lambda: False, vector_model: str | None = None) -> list[tuple[str, str]]:
        """Load the scopes last used (``recent-scopes.json``, most recent first) until the memory
        limit is nearly full."""
        warmed: list[tuple[str, str]] = []
        for entry in recent_scopes(self._recent_file):
            if stop() or self.scope_copies.nbytes >= 0.9 * self.scope_copies.max_bytes:
                break
            if entry["tenant"] in self.tenant_names():
                tenant = self.tenant(entry["tenant"])
                # Copies of another model's vectors (or of any model's) are rebuilt by the first recall.
                tenant._use_model(vector_model)
                tenant.term_counts(entry["scope"], [])  # reads, so loads, the copy
                warmed.append((entry["tenant"], entry["scope"]))
        return warmed

    def freshen(self, stop: Callable[[], bool] = lambda: False) -> int:
        taken = freshen(self.scope_copies, FRESHEN_SCOPES, stop)
        return taken + load_written(self.scope_copies, FRESHEN_SCOPES, stop)

    def _remember(self, *, at_most_every: float = 1.0) -> None:
        """Write which scopes are held, most recently used first (what the next start warms)."""
        now = time.monotonic()
        if now - self._remembered < at_most_every:
            return
        self._remembered = now
        held = [
            {"tenant": Path(key.rpartition(":")[0]).stem, "scope": key.rpartition(":")[2], "rows": rows}
            for key, rows in self.scope_copies.held(RECENT_LISTED)
        ]
        temporary = self._recent_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(held))
        temporary.replace(self._recent_file)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for store in self._tenants.values():
                store.close()
            self._tenants.clear()
            if self.scope_copies.loads:  # a process that read no scope keeps the list it found
                self._remember(at_most_every=0)
            self.scope_copies.clear()


def recent_scopes(path: Path) -> list[dict[str, Any]]:
    """Return the scopes a previous run held, most recently used first ([] if unknown)."""
    try:
        entries = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):  # a damaged list only costs the warm-up
        log.warning("could not read %s; no scope is warmed", path, exc_info=True)
        return []
    return [e for e in entries if isinstance(e, dict) and {"tenant", "scope"} <= e.keys()]
