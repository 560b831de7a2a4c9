"""The ``engram`` command line: serve, keys, remember, recall.

Local commands work on the data folder directly (``--home`` or ``ENGRAM_HOME``) as the operator
of the machine, which is why they need no key; everything they change is audited all the same.
"""

from __future__ import annotations

import getpass
import json
import logging
import sys
from contextlib import nullcontext
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from engramdb import __version__, clock
from engramdb.cli.bench import bench_app
from engramdb.cli.evaluate import eval_app
from engramdb.config import Settings, tune_process
from engramdb.contract.canonical import hash_scope
from engramdb.contract.events import FactWrite, ScopeFields
from engramdb.core import audit, auth
from engramdb.core.auth import Caller
from engramdb.core.embedding import make_embedder
from engramdb.core.service import MemoryService
from engramdb.errors import EngramError, NotFoundError
from engramdb.jobs.embedding import drain
from engramdb.models.api import RecallRequest, RejectDecision, ReviewDecision
from engramdb.storage.port import Store
from engramdb.storage.registry import open_store

app = typer.Typer(
    help="EngramDB: long-term memory for LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
audit_app = typer.Typer(help="Inspect and verify the audit log.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")
review_app = typer.Typer(help="The review queue: facts awaiting a person.", no_args_is_help=True)
app.add_typer(review_app, name="review")
app.add_typer(bench_app, name="bench")
app.add_typer(eval_app, name="eval")
out = Console()
err = Console(stderr=True, soft_wrap=True)  # messages stay one line: scripts grep them

TenantOpt = Annotated[str, typer.Option("--tenant", help="tenant name")]
HomeOpt = Annotated[str | None, typer.Option("--home", help="data folder (default ./.engram or ENGRAM_HOME)")]


def _settings(home: str | None, **overrides: Any) -> Settings:
    if home is not None:
        overrides["home"] = home
    return Settings(**overrides)


def _operator(tenant: str) -> Caller:
    return Caller(tenant=tenant, key_id="local-cli", role="admin")


def _default_participant() -> str:
    return hash_scope(["local", getpass.getuser()])


class _ScopeOpts:
    """Scope flags shared by remember and recall (defaults: this machine's local user)."""

    def __init__(
        self, agent_id: str, profile_id: str, privacy: str, participant: str | None, sandbox: str
    ) -> None:
        self.fields = ScopeFields.model_validate(
            {
                "agentId": agent_id,
                "profileId": profile_id,
                "privacyScope": privacy,
                "participantScopeHash": participant or _default_participant(),
                "sandboxEligible": _parse_bool("--sandbox-eligible", sandbox),
            }
        )


AgentOpt = Annotated[str, typer.Option("--agent-id", help="agentId of the scope")]
ProfileOpt = Annotated[str, typer.Option("--profile-id", help="profileId of the scope")]
PrivacyOpt = Annotated[str, typer.Option("--privacy", help="private or shared")]
ParticipantOpt = Annotated[
    str | None, typer.Option("--participant", help="participantScopeHash (default: local user)")
]
SandboxOpt = Annotated[str, typer.Option("--sandbox-eligible", help="true or false")]


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="address to listen on")] = None,
    port: Annotated[int | None, typer.Option(help="port to listen on")] = None,
    home: HomeOpt = None,
) -> None:
    """Run the server on the embedded default (SQLite under the data folder)."""
    import uvicorn

    from engramdb.api.rest import create_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    overrides: dict[str, Any] = {k: v for k, v in {"host": host, "port": port}.items() if v}
    settings = _settings(home, **overrides)
    store = open_store(settings.storage_url(), **settings.store_options())
    if not store.tenant_names():
        token, _ = auth.create_key(store, tenant="default", role="admin", grant={}, label="first admin",
                                   create_tenant=True)  # fmt: skip
        out.print("[bold]Created tenant 'default'.[/bold] First admin key (shown once):")
        out.print(token, soft_wrap=True, highlight=False)
    out.print(f"EngramDB {__version__} on http://{settings.host}:{settings.port} "
              f"(data: {settings.home.resolve()})")  # fmt: skip
    uvicorn.run(create_app(settings, store=store), host=settings.host, port=settings.port,
                log_level="info")  # fmt: skip


@keys_app.command("create")
def keys_create(
    role: Annotated[str, typer.Option("--role", help="agent, host, reviewer or admin")],
    tenant: TenantOpt = "default",
    agent_id: Annotated[str | None, typer.Option("--agent-id")] = None,
    profile_id: Annotated[str | None, typer.Option("--profile-id")] = None,
    participant: Annotated[str | None, typer.Option("--participant")] = None,
    privacy: Annotated[str | None, typer.Option("--privacy")] = None,
    sandbox_eligible: Annotated[str | None, typer.Option("--sandbox-eligible", help="true or false")] = None,
    label: Annotated[str | None, typer.Option("--label")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON object")] = False,
    create_tenant: Annotated[bool, typer.Option("--create-tenant", help="create the tenant if it does not exist")] = False,
    home: HomeOpt = None,
) -> None:
    """Create an API key and print it (shown once). The tenant must exist unless --create-tenant."""
    grant = {
        "agentId": agent_id,
        "profileId": profile_id,
        "participantScopeHash": participant,
        "privacyScope": privacy,
        "sandboxEligible": _parse_bool("--sandbox-eligible", sandbox_eligible),
    }
    store = _open(home)
    try:
        token, record = auth.create_key(store, tenant=tenant, role=role, grant=grant, label=label,
                                        create_tenant=create_tenant)  # fmt: skip
    except NotFoundError as error:  # the only thing create_key looks up is the tenant
        raise NotFoundError(f"{error.message}; pass --create-tenant to create it", field="--tenant") from error
    if as_json:
        payload = {"key": token, "keyId": record.key_id, "tenant": tenant, "role": role,
                   "grant": json.loads(record.grant_json)}  # fmt: skip
        print(json.dumps(payload))
    else:
        print(token)


@keys_app.command("list")
def keys_list(tenant: TenantOpt = "default", home: HomeOpt = None) -> None:
    """List the keys of a tenant."""
    store = _open(home)
    table = Table("key id", "role", "grant", "label", "created", "revoked")
    for key in store.tenant(tenant).list_keys():
        grant = ", ".join(f"{k}={v}" for k, v in json.loads(key.grant_json).items()) or "tenant-wide"
        table.add_row(key.key_id, key.role, Text(grant), Text(key.label or ""), key.created_at[:19],
                      (key.revoked_at or "")[:19])  # fmt: skip
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: str, tenant: TenantOpt = "default", home: HomeOpt = None) -> None:
    """Revoke a key by its id."""
    store = _open(home)
    if not auth.revoke_key(store, tenant=tenant, key_id=key_id):
        raise EngramError(f"no active key {key_id} in tenant {tenant}")
    out.print(f"revoked {key_id}")


@app.command()
def remember(
    text: str,
    subject: Annotated[str, typer.Option("--subject", help="subjectKey the fact is about")],
    kind: Annotated[str, typer.Option("--kind", help="kind of fact, e.g. preference")] = "note",
    confidence: Annotated[float, typer.Option(help="0..1")] = 1.0,
    tenant: TenantOpt = "default",
    agent_id: AgentOpt = "cli",
    profile_id: ProfileOpt = "default",
    privacy: PrivacyOpt = "private",
    participant: ParticipantOpt = None,
    sandbox: SandboxOpt = "false",
    home: HomeOpt = None,
) -> None:
    """Store a trusted fact in a scope and embed it now."""
    settings = _settings(home)
    service = _local_service(settings)
    scope = _ScopeOpts(agent_id, profile_id, privacy, participant, sandbox).fields
    body = FactWrite.model_validate(
        {**scope.named_scope_fields(), "runtime": "custom", "text": text, "kind": kind,
         "subjectKey": subject, "confidence": confidence, "sourceEventId": "cli",
         "validFrom": clock.now_text(), "visibility": "participant", "trustClass": "trusted",
         "provenance": "cli:remember"}  # fmt: skip
    )
    service.store.tenant(tenant, create=True)  # the operator may start a tenant by writing
    result = service.write_fact(_operator(tenant), body)
    drain(service.store.tenant(tenant), service.embedder)
    out.print(f"{'stored' if result.created else 'already stored'} fact {result.id}")


@app.command()
def recall(
    query: str,
    limit: Annotated[int, typer.Option(help="memories to return (1-50)")] = 8,
    explain: Annotated[bool, typer.Option("--explain", help="show each arm and feature")] = False,
    context: Annotated[bool, typer.Option("--context", help="print the formatted block")] = False,
    tenant: TenantOpt = "default",
    agent_id: AgentOpt = "cli",
    profile_id: ProfileOpt = "default",
    privacy: PrivacyOpt = "private",
    participant: ParticipantOpt = None,
    sandbox: SandboxOpt = "false",
    home: HomeOpt = None,
) -> None:
    """Recall memories of a scope, ranked, with an optional score breakdown."""
    service = _local_service(_settings(home))
    scope = _ScopeOpts(agent_id, profile_id, privacy, participant, sandbox).fields
    request = RecallRequest.model_validate({"query": query, "limit": limit, "explain": explain,
                                            "scope": scope.named_scope_fields()})  # fmt: skip
    response = service.recall(_operator(tenant), request)
    if context:
        print(response.context)
        return
    if not response.memories:
        out.print("no memories in this scope match")
    for i, memory in enumerate(response.memories, start=1):
        out.print(
            f"[bold]{i}.[/bold] {memory.score:.3f}  {memory.source}  trust={memory.trust_class}  "
            f"status={memory.status}  embedding={memory.embedding_state}",
            highlight=False,
        )
        out.print(f"   {memory.text}", soft_wrap=True, highlight=False, markup=False)
        if explain and memory.explain:
            arms = memory.explain.arms
            features = "  ".join(f"{k} +{v:.3f}" for k, v in memory.explain.features.items())
            out.print(f"   dense {_arm(arms.get('dense'))}  lexical {_arm(arms.get('lexical'))}  "
                      f"{features}", style="dim", highlight=False)  # fmt: skip


@app.command("mcp")
def mcp_stdio(
    agent_id: Annotated[str, typer.Option("--agent-id", help="agentId of the scope")],
    profile_id: Annotated[str, typer.Option("--profile-id", help="profileId of the scope")],
    tenant: TenantOpt = "default",
    privacy: PrivacyOpt = "private",
    participant: ParticipantOpt = None,
    sandbox: SandboxOpt = "false",
    home: HomeOpt = None,
) -> None:
    """Serve the memory tools over MCP stdio, in one scope fixed by these flags."""
    from engramdb.api.mcp import configured_caller, serve_stdio
    from engramdb.contract.events import Scope
    from engramdb.jobs.embedding import EmbeddingWorker

    # stdout carries the protocol: logs go to stderr, nothing else is printed.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s %(message)s")
    settings = _settings(home)
    service = _local_service(settings)
    fields = _ScopeOpts(agent_id, profile_id, privacy, participant, sandbox).fields
    scope = Scope.model_validate(fields.named_scope_fields())
    service.store.tenant(tenant, create=True)  # the operator may start a tenant by serving it
    worker = EmbeddingWorker(service.store, service.embedder, service.written,
                             batch_size=settings.embed_batch_size, poll_seconds=settings.embed_poll_seconds)  # fmt: skip
    worker.start()
    try:
        serve_stdio(service, configured_caller(tenant, scope))
    finally:
        worker.stop()
        service.store.close()


@audit_app.command("verify")
def audit_verify(tenant: TenantOpt = "default", home: HomeOpt = None) -> None:
    """Recompute the tenant's audit chain; exit 1 and name the first broken entry if any."""
    store = _open(home)
    verdict = audit.verify(store.tenant(tenant))
    if verdict.ok:
        out.print(f"audit chain of {tenant!r} verified: {verdict.checked} entries")
        return
    err.print(Text.assemble((f"audit chain broken at entry {verdict.broken_seq}", "red"),
                            f": {verdict.problem} ({verdict.checked} entries verified before it)"))  # fmt: skip
    raise typer.Exit(1)


@audit_app.command("list")
def audit_list(
    tenant: TenantOpt = "default",
    after: Annotated[int, typer.Option(help="start after this sequence number")] = 0,
    limit: Annotated[int, typer.Option(help="entries to show")] = 50,
    home: HomeOpt = None,
) -> None:
    """Show audit entries in order."""
    store = _open(home)
    table = Table("seq", "at", "action", "actor", "target", "reason")
    for e in store.tenant(tenant).audit_entries(after, limit):
        table.add_row(str(e.seq), e.at[:19], e.action, f"{e.actor_role}:{e.actor_key_id or '-'}",
                      (e.target_id or "")[:12], Text(e.reason or ""))  # fmt: skip
    out.print(table)


@review_app.command("list")
def review_list(
    tenant: TenantOpt = "default",
    kind: Annotated[str | None, typer.Option(help="only this kind")] = None,
    subject: Annotated[str | None, typer.Option(help="only this subjectKey")] = None,
    limit: Annotated[int, typer.Option(help="items to show")] = 50,
    home: HomeOpt = None,
) -> None:
    """List facts awaiting review, oldest first."""
    service = _local_service(_settings(home), embedder="hashing")
    queue = service.review_queue(_operator(tenant), kind=kind, subject_key=subject, limit=limit)
    if not queue.items:
        out.print("nothing awaits review")
        return
    table = Table("fact id", "recorded", "subject / kind", "trust", "origin", "text", "scope")
    for item in queue.items:
        fact, scope = item.fact, item.scope
        # Stored strings are Text, not markup: "[/x]" in a fact would otherwise vanish or crash.
        table.add_row(fact.id[:12], fact.recorded_at[:19],
                      Text(f"{fact.event['subjectKey']} / {fact.event['kind']}"), fact.event["trustClass"],
                      fact.origin, Text(fact.event["text"]), Text(f"{scope['agentId']}/{scope['profileId']}/"
                      f"{scope['participantScopeHash'][:8]}"))  # fmt: skip
    out.print(table)


@review_app.command("approve")
def review_approve(
    fact_id: str,
    reason: Annotated[str | None, typer.Option(help="why")] = None,
    tenant: TenantOpt = "default",
    home: HomeOpt = None,
) -> None:
    """Approve a pending fact (a prefix of its id is enough when it is unique)."""
    service = _local_service(_settings(home), embedder="hashing")
    fact_id = _full_pending_id(service, tenant, fact_id)
    decision = ReviewDecision.model_validate({"reason": reason} if reason else {})
    result = service.approve(_operator(tenant), fact_id, decision)
    out.print(f"approved {result.id}: {result.outcome}, now {result.memory.status}")


@review_app.command("reject")
def review_reject(
    fact_id: str,
    reason: Annotated[str, typer.Option(help="why (kept with the tombstone)")],
    tenant: TenantOpt = "default",
    home: HomeOpt = None,
) -> None:
    """Reject a pending fact; its value is tombstoned."""
    service = _local_service(_settings(home), embedder="hashing")
    fact_id = _full_pending_id(service, tenant, fact_id)
    view = service.reject(_operator(tenant), fact_id, RejectDecision.model_validate({"reason": reason}))
    out.print(f"rejected {view.id}; its value is tombstoned")


def _full_pending_id(service: MemoryService, tenant: str, prefix: str) -> str:
    ids = {i.fact.id for i in service.review_queue(_operator(tenant), limit=1000).items}
    matches = [i for i in ids if i.startswith(prefix)]
    if len(matches) != 1:
        raise EngramError(f"{len(matches)} pending facts match {prefix!r}", field="factId")
    return matches[0]


@app.command("export")
def export_tenant(
    tenant: TenantOpt = "default",
    out_path: Annotated[str | None, typer.Option("--out", help="JSONL file (default: stdout)")] = None,
    home: HomeOpt = None,
) -> None:
    """Write a tenant (memories with their history, tombstones, keys, audit chain) as JSONL."""
    store = _open(home)
    rows = store.tenant(tenant).export_rows()
    header = {"format": "engramdb-export", "version": 1, "tenant": tenant, "exportedAt": clock.now_text()}
    with open(out_path, "w", encoding="utf-8") if out_path else nullcontext(sys.stdout) as sink:
        sink.write(json.dumps(header) + "\n")
        count = 0
        for table, row in rows:
            sink.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
            count += 1
    if out_path:
        out.print(f"exported {count} rows of tenant {tenant!r} to {out_path}")


@app.command("import")
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
        counts = _open(home).tenant(target, create=True).import_rows(rows)
    out.print(f"imported into tenant {target!r}: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items())))


def _export_line(number: int, text: str) -> tuple[str, dict[str, Any]]:
    """One ``{"table", "row"}`` line of an export; a broken line stops the import (nothing is kept)."""
    try:
        line = json.loads(text)
        return str(line["table"]), dict(line["row"])
    except (ValueError, KeyError, TypeError) as error:
        raise EngramError(f"line {number} of the export is not a table row: {error}", field="--in") from error


def _arm(arm: Any) -> str:
    return "-" if arm is None else f"#{arm.rank} {arm.raw:.3f} (+{arm.contribution:.3f}, weight {arm.weight:.2f})"


def _open(home: str | None) -> Store:
    settings = _settings(home)
    return open_store(settings.storage_url(), **settings.store_options())


def _local_service(settings: Settings, embedder: str | None = None) -> MemoryService:
    """The service over the local data folder. Commands that never embed pass ``hashing``
    so they do not load the model (the embedding worker embeds with the configured one)."""
    store = open_store(settings.storage_url(), **settings.store_options())
    model = make_embedder(embedder or settings.embedder, api_key=settings.embedder_api_key)
    return MemoryService(store, model, settings)


def _parse_bool(flag: str, value: str | None) -> bool | None:
    if value is None:
        return None
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise EngramError(f"{flag} must be true or false", field=flag)


def main() -> None:
    """Entry point: run the app, turning EngramError into a message and exit code 1."""
    tune_process()
    try:
        app()
    except EngramError as error:
        _print_error(error.message)
        sys.exit(1)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "input"
        _print_error(f"{field}: {first['msg']}")
        sys.exit(1)


def _print_error(message: str) -> None:
    # The message is plain text: rich would take "[a-f0-9]" in a pattern for markup and drop it.
    err.print(Text.assemble(("error:", "red"), " ", message), highlight=False)
