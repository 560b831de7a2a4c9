"""Operator commands for a store that ages: re-embedding after an embedder change, backups and
restoring them. They work on the data folder (or the configured PostgreSQL), not through a server."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from engramdb.cli.context import open_local_store, settings_for
from engramdb.cli.operator import HomeOpt

out = Console()


def reembed(
    tenant: Annotated[str | None, typer.Option("--tenant", help="only this tenant (default: every tenant)")] = None,
    home: HomeOpt = None,
) -> None:
    """Embed again, with the configured embedder, every memory whose vector another model made.

    Resumable: stop it at any point and run it again; it continues with what is still stale.
    """
    from engramdb.core.embedding import make_embedder
    from engramdb.jobs.embedding import reembed as reembed_tenant

    settings = settings_for(home)
    store = open_local_store(home)
    embedder = make_embedder(settings.embedder, api_key=settings.embedder_api_key)
    try:
        names = [tenant] if tenant else store.tenant_names()
        backlog = {name: store.tenant(name).aging.stale_count(embedder.model_id) for name in names}
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=out, transient=False) as bar:
            for name in names:
                task = bar.add_task(f"re-embedding {name} with {embedder.model_id}", total=backlog[name])

                def advance(count: int, task: TaskID = task) -> None:
                    bar.advance(task, count)

                done = reembed_tenant(store.tenant(name), embedder, batch_size=settings.embed_batch_size,
                                      progress=advance)  # fmt: skip
                bar.update(task, completed=done, total=max(done, backlog[name]))
        out.print(f"re-embedded {sum(backlog.values())} memories with {embedder.model_id}")
    finally:
        store.close()
