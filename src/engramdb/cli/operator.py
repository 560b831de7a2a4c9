"""Commands only the machine's operator runs, on the data folder: serve, mcp, export and
import. They are not operations of the server."""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from contextlib import nullcontext
from typing import Annotated, Any

import typer
from rich.console import Console

from engramdb import __version__, clock, traces
from engramdb.cli.context import DEFAULT_TENANT, local_scope, open_local_store, settings_for
from engramdb.cli.process import cap_malloc_arenas, shorten_interpreter_turns, step_aside
from engramdb.config import Settings, tune_process
from engramdb.errors import EngramError, NotFoundError
from engramdb.logs import configure_logging

out = Console()
err = Console(stderr=True, soft_wrap=True)  # messages stay one line: scripts grep them

TenantOpt = Annotated[str, typer.Option("--tenant", help="tenant name")]
HomeOpt = Annotated[str | None, typer.Option("--home", help="data folder (default ./.engram or ENGRAM_HOME)")]


def settle_process(settings: Settings) -> None:
    """How the server's process sits on the machine, set before its threads start."""
    cap_malloc_arenas(settings.malloc_arenas)
    shorten_interpreter_turns(settings.gil_switch_ms)


def serve(
    host: Annotated[str | None, typer.Option(help="address to listen on")] = None,
    port: Annotated[int | None, typer.Option(help="port to listen on")] = None,
    home: HomeOpt = None,
) -> None:
    """Run the server on the embedded default (SQLite under the data folder)."""
    import uvicorn

    from engramdb.api.head_limit import protocol
    from engramdb.api.keep_alive import KEEP_ALIVE_SECONDS
    from engramdb.api.rest import create_app
    from engramdb.core import auth
    from engramdb.storage.registry import open_store

    configure_logging(logging.INFO, sys.stdout)
    traces.start(__version__)  # OTEL_EXPORTER_OTLP_ENDPOINT: spans by OTLP (docs/operations.md)
    settings = settings_for(home).model_copy(update={k: v for k, v in {"host": host, "port": port}.items() if v})
    settle_process(settings)
    store = open_store(settings.storage_url(), **settings.store_options())
    if not store.tenant_names():
        token, _ = auth.create_key(
            store, tenant=DEFAULT_TENANT, role="admin", grant={}, label="first admin", create_tenant=True
        )
        out.print("[bold]Created tenant 'default'.[/bold] First admin key (shown once):")
        out.print(token, soft_wrap=True, highlight=False)
    out.print(f"EngramDB {__version__} on http://{settings.host}:{settings.port} (data: {settings.home.resolve()})")
    app = create_app(settings, store=store, owns_process=True)
    try:
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_config=None,
            log_level="info",
            access_log=False,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            http=protocol(),  # its head capped (api/head_limit.py)
        )  # the app logs one JSON access line per request
    finally:
        traces.stop()  # the spans still queued go out before the process ends


def mcp(
    agent_id: Annotated[str, typer.Option("--agent-id", help="agentId of the scope")],
    profile_id: Annotated[str, typer.Option("--profile-id", help="profileId of the scope")],
    tenant: TenantOpt = DEFAULT_TENANT,
    privacy: Annotated[str, typer.Option("--privacy", help="private or shared")] = "private",
    participant: Annotated[
        str | None, typer.Option("--participant", help="participantScopeHash (default: this user)")
    ] = None,
    sandbox: Annotated[str, typer.Option("--sandbox-eligible", help="true or false")] = "false",
    home: HomeOpt = None,
    create_tenant: Annotated[bool, typer.Option("--create-tenant", help="create --tenant if missing")] = False,
) -> None:
    """Serve the memory tools over MCP stdio, in one scope fixed by these flags."""
    from engramdb.api.mcp.transports import configured_caller, serve_stdio
    from engramdb.contract.events import Scope
    from engramdb.core.embedder_choice import embedder_for
    from engramdb.core.service import MemoryService
    from engramdb.jobs.embedding import EmbeddingWorker

    # stdout carries the protocol: logs go to stderr, nothing else is printed.
    configure_logging(logging.WARNING, sys.stderr)
    traces.start(__version__)
    settings: Settings = settings_for(home)
    named = {
        "agentId": agent_id,
        "profileId": profile_id,
        "privacyScope": privacy,
        "sandboxEligible": truth("--sandbox-eligible", sandbox),
    }
    if participant:
        named["participantScopeHash"] = participant
    scope = Scope.model_validate({**local_scope(), **named})
    store = open_local_store(home)
    service = MemoryService(store, embedder_for(settings, store), settings)
    tune_process()  # numpy is loaded now (it was not when the command started): one BLAS thread, as `serve`
    # The default tenant starts on first use (as with `serve`); another name must exist or be asked
    # for, so that a misspelt --tenant in a host's config is refused instead of serving an empty one.
    try:
        store.tenant(tenant, create=create_tenant or tenant == DEFAULT_TENANT)
    except NotFoundError as error:
        store.close()
        raise NotFoundError(f"{error.message}; pass --create-tenant to create it", field="--tenant") from error
    worker = EmbeddingWorker(
        store,
        service.shared.embedder,
        service.shared.written,
        batch_size=settings.embed_batch_size,
        poll_seconds=settings.embed_poll_seconds,
    )
    worker.start()
    try:
        serve_stdio(service, configured_caller(tenant, scope))
    finally:
        worker.stop()
        store.close()
        traces.stop()


def export_tenant(
    tenant: TenantOpt = DEFAULT_TENANT,
    out_path: Annotated[str | None, typer.Option("--out", help="JSONL file (default: stdout)")] = None,
    participant: Annotated[
        str | None,
        typer.Option("--participant", help="only this participantScopeHash's memories, tombstones and records"),
    ] = None,
    home: HomeOpt = None,
) -> None:
    """Write a tenant (memories with their history, tombstones, keys, audit chain) as JSONL, or one
    participant's data (access and portability requests)."""
    from engramdb.core.erasure import participant_rows

    store = open_local_store(home).tenant(tenant)
    rows = participant_rows(store, participant) if participant else store.export_rows()
    header = {"format": "engramdb-export", "version": 1, "tenant": tenant, "exportedAt": clock.now_text()}
    with open(out_path, "w", encoding="utf-8") if out_path else nullcontext(sys.stdout) as sink:
        sink.write(json.dumps(header) + "\n")
        count = 0
        for table, row in rows:
            sink.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
            count += 1
    if out_path:
        out.print(f"exported {count} rows of tenant {tenant!r} to {out_path}")


def import_tenant(
    in_path: Annotated[str, typer.Option("--in", help="JSONL file written by engram export")],
    tenant: Annotated[str | None, typer.Option("--tenant", help="target tenant (default: the exported one)")] = None,
    home: HomeOpt = None,
) -> None:
    """Load an export into an empty tenant of the configured store (SQLite or PostgreSQL)."""
    with open(in_path, encoding="utf-8") as source:
        try:
            header = json.loads(source.readline())
        except ValueError:
            header = None
        if not isinstance(header, dict) or header.get("format") != "engramdb-export" or header.get("version") != 1:
            raise EngramError(f"{in_path} is not an engramdb export (version 1)", field="--in")
        target = tenant or header["tenant"]
        rows = (_export_line(n, text) for n, text in enumerate(source, start=2) if text.strip())
        counts = open_local_store(home).tenant(target, create=True).import_rows(rows)
    out.print(f"imported into tenant {target!r}: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items())))


def _export_line(number: int, text: str) -> tuple[str, dict[str, Any]]:
    """One ``{"table", "row"}`` line of an export; a broken line stops the import (nothing is kept)."""
    try:
        line = json.loads(text)
        return str(line["table"]), dict(line["row"])
    except (ValueError, KeyError, TypeError) as error:
        raise EngramError(f"line {number} of the export is not a table row: {error}", field="--in") from error


def truth(flag: str, value: str) -> bool:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise EngramError(f"{flag} must be true or false", field=flag)


def work(home: HomeOpt = None) -> None:
    """Run the extraction queue's workers on the data folder (or ENGRAM_DATABASE_URL) until stopped.

    ``engram serve`` starts this beside itself when a model is configured (llm.workerProcess); run it
    yourself to work a queue from other machines or processes.
    """
    from engramdb.core.embedder_choice import embedder_for
    from engramdb.core.foreground import Foreground
    from engramdb.core.service import MemoryService
    from engramdb.jobs.extraction import ExtractionWorker
    from engramdb.storage.registry import open_store

    configure_logging(logging.INFO, sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per model call: the ledger has them
    traces.start(__version__)
    settings = settings_for(home)
    if not settings.llm.configured:
        raise EngramError(
            "no chat model is configured: set ENGRAM_LLM__BASE_URL and ENGRAM_LLM__MODEL (docs/assist.md)",
            field="ENGRAM_LLM__BASE_URL",
        )
    step_aside(settings.llm.worker_nice, idle=settings.llm.worker_idle)
    store = open_store(settings.storage_url(), **settings.store_options())
    # Background work on a small machine: one thread of the embedding model, not two.
    embedder = embedder_for(settings, store, threads=1)
    service = MemoryService(store, embedder, settings)
    service.shared.foreground = Foreground.shared(settings.recalls_file())  # the server's recalls in flight: ours wait
    worker = ExtractionWorker(service, threads=max(1, settings.llm.workers), poll_seconds=0.2, embed=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    worker.start()
    err.print(
        f"extraction workers: {max(1, settings.llm.workers)} threads, model {settings.llm.model}", highlight=False
    )
    stop.wait()
    worker.stop(timeout=30)
    service.shared.foreground.close()
    store.close()
    traces.stop()
