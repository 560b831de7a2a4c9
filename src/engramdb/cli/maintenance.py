"""Operator commands for a store that ages: re-embedding after an embedder change, backups and
restoring them. They work on the data folder (or the configured PostgreSQL), not through a server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from engramdb import clock
from engramdb.cli.context import open_local_store, settings_for
from engramdb.cli.operator import HomeOpt
from engramdb.errors import EngramError

out = Console()
MANIFEST = "engram-backup.json"


def reembed(
    tenant: Annotated[str | None, typer.Option("--tenant", help="only this tenant (default: every tenant)")] = None,
    home: HomeOpt = None,
) -> None:
    """Embed again, with the configured embedder, every memory and record whose vector another model made.

    Resumable: stop it at any point and run it again; it continues with what is still stale.
    """
    from engramdb.core.admin import stale_backlog
    from engramdb.core.embedder_choice import embedder_for
    from engramdb.jobs.embedding import reembed as reembed_tenant

    settings = settings_for(home)
    store = open_local_store(home)
    embedder = embedder_for(settings, store)
    try:
        names = [tenant] if tenant else store.tenant_names()
        records = sum(store.tenant(name).aging.stale_record_count(embedder.model_id) for name in names)
        backlog = {name: stale_backlog(store.tenant(name), embedder.model_id) for name in names}
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=out, transient=False) as bar:
            for name in names:
                task = bar.add_task(f"re-embedding {name} with {embedder.model_id}", total=backlog[name])

                def advance(count: int, task: TaskID = task) -> None:
                    bar.advance(task, count)

                done = reembed_tenant(
                    store.tenant(name), embedder, batch_size=settings.embed_batch_size, progress=advance
                )
                bar.update(task, completed=done, total=max(done, backlog[name]))
        memories = sum(backlog.values()) - records
        out.print(f"re-embedded {memories} memories and {records} record texts with {embedder.model_id}")
    finally:
        store.close()


def backup(
    dest: Annotated[str, typer.Argument(help="folder to write the backup into (new or empty)")],
    home: HomeOpt = None,
) -> None:
    """Copy every tenant, consistently, while the server keeps serving (SQLite: the online backup
    API; PostgreSQL: pg_dump of the schema)."""
    settings = settings_for(home)
    target = Path(dest)
    if target.exists() and any(target.iterdir()):
        raise EngramError(f"{dest} is not empty", field="dest")
    store = open_local_store(home)
    tenants: list[str] = []
    try:
        started, tenants = clock.now_text(), store.tenant_names()
        store.backup(target, pg_bin=settings.pg_bin)
        manifest = {
            "format": "engramdb-backup",
            "version": 1,
            "startedAt": started,
            "finishedAt": clock.now_text(),
            "backend": settings.storage_url().split(":", 1)[0],
            "schema": settings.pg_schema,
            "tenants": tenants,
        }
        (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    finally:
        store.close()
    out.print(f"backed up {len(tenants)} tenant(s) to {dest}")


def restore(
    source: Annotated[str, typer.Argument(help="a folder written by engram backup")],
    home: HomeOpt = None,
) -> None:
    """Restore a backup into an empty home (or a PostgreSQL database without the schema), then
    verify every tenant's audit chain."""
    from engramdb.core import audit
    from engramdb.storage.registry import restore_backup

    settings = settings_for(home)
    folder = Path(source)
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise EngramError(f"{source} is not an engram backup: {error}", field="source") from error
    restore_backup(
        settings.storage_url(), folder, schema=manifest.get("schema") or settings.pg_schema, pg_bin=settings.pg_bin
    )
    store = open_local_store(home)
    try:
        for name in store.tenant_names():
            verdict = audit.verify(store.tenant(name))
            if not verdict.ok:
                raise EngramError(f"tenant {name}: audit chain broken at entry {verdict.broken_seq}: {verdict.problem}")
            out.print(f"restored tenant {name}: audit chain verified ({verdict.checked} entries)")
    finally:
        store.close()
