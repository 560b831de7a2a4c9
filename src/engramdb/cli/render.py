"""What a command prints: a table or a line for people, the answer's JSON with ``--json``.

Stored strings are printed as text, never as rich markup: a fact reading 'Likes [/x]' must show
as it is. Each kind of answer has one way of being shown, whichever operation returned it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from engramdb.models.admin import AuditPage, AuditVerdict, Health, KeyCreated, KeyList
from engramdb.models.lifecycle import FactHistory, ReviewQueue, TombstoneList, TombstoneView
from engramdb.models.memories import EpisodeBatchResult, EpisodeList, FactList, MemoryView, WriteResponse
from engramdb.models.recall import ArmExplain, RecallResponse
from engramdb.models.scopes import ScopeList

out = Console()
err = Console(stderr=True, soft_wrap=True)


def show(answer: BaseModel | None, *, as_json: bool, done: str | None) -> None:
    """Print an operation's answer."""
    if as_json:  # the answer as the REST API gives it, nulls included
        print(
            json.dumps(answer.model_dump(by_alias=True, mode="json") if answer is not None else {}, ensure_ascii=False)
        )
    elif done is not None:
        out.print(Text(done))
    elif answer is not None:
        SHOWN.get(type(answer), _as_json)(answer)


def _as_json(answer: Any) -> None:
    print(json.dumps(answer.wire(), ensure_ascii=False, indent=2))


def _line(text: str, style: str | None = None) -> None:
    out.print(Text(text, style=style or ""), soft_wrap=True)


def _health(h: Health) -> None:
    _line(f"EngramDB {h.version}: {h.status} (embedder {h.embedder}, storage {h.storage})")


def _written(w: WriteResponse) -> None:
    noun = "fact" if w.memory.source == "MEMORY_FACT" else "episode"
    status = w.memory.status
    lines = {
        "created": f"stored {noun} {w.id} ({status})",
        "exists": f"already stored {noun} {w.id} ({status})",
        "superseded": f"stored {noun} {w.id} ({status}); it replaced {', '.join(w.superseded_fact_ids)}",
        "history": f"stored {noun} {w.id} as history: {w.memory.status_reason or 'a newer fact is current'}",
        "parked": f"stored {noun} {w.id}, waiting for review: {w.memory.status_reason}",
    }
    _line(lines.get(w.outcome, f"{w.outcome} {noun} {w.id} ({status})"))


def _memory(m: MemoryView) -> None:
    event = m.event
    text = event.get("text") or event.get("summary") or ""
    _line(f"{m.id}  {m.source}  {m.status}  origin={m.origin}  embedding={m.embedding.state}")
    if event.get("subjectKey"):
        _line(
            f"  {event['subjectKey']} / {event['kind']}  valid from {m.valid_from}"
            + (f" until {m.invalid_at or m.valid_until}" if m.invalid_at or m.valid_until else "")
        )
    _line(f"  {text}")
    if m.status_reason:
        _line(f"  why: {m.status_reason}", "dim")


def _table(*columns: str) -> Table:
    return Table(*columns)


def _facts(listing: FactList) -> None:
    if not listing.facts:
        _line("no facts match")
        return
    table = _table("fact id", "subject / kind", "status", "valid from", "text")
    for f in listing.facts:
        table.add_row(
            f.id[:12],
            Text(f"{f.event['subjectKey']} / {f.event['kind']}"),
            f.status,
            (f.valid_from or "")[:19],
            Text(f.event["text"]),
        )
    out.print(table)
    if listing.next_cursor:
        _line(f"more: --cursor {listing.next_cursor}", "dim")


def _episodes(listing: EpisodeList) -> None:
    if not listing.episodes:
        _line("no episodes match")
        return
    table = _table("observed", "session", "episode id", "summary")
    for e in listing.episodes:
        table.add_row(
            e.event["observedAt"][:19], Text(e.event["externalSessionId"]), e.id[:12], Text(e.event["summary"])
        )
    out.print(table)
    if listing.next_cursor:
        _line(f"more: --cursor {listing.next_cursor}", "dim")


def _history(history: FactHistory) -> None:
    table = _table("#", "fact id", "status", "valid from", "recorded", "retired", "reason", "text")
    for i, v in enumerate(history.versions, start=1):
        table.add_row(
            str(i),
            v.id[:12],
            v.status,
            (v.valid_from or "")[:19],
            v.recorded_at[:19],
            (v.retired_at or "")[:19],
            Text(v.status_reason or ""),
            Text(v.event["text"]),
        )
    out.print(table)
    if history.tombstones:
        _tombstones(TombstoneList(tombstones=history.tombstones))
    if history.next_cursor:
        _line(f"{len(history.versions)} of {history.total} versions; more: --cursor {history.next_cursor}", "dim")


def _tombstones(listing: TombstoneList) -> None:
    if not listing.tombstones:
        _line("no tombstones")
        return
    table = _table("tombstone id", "subject / kind", "fact id", "created", "lifted", "reason")
    for t in listing.tombstones:
        table.add_row(
            t.tombstone_id,
            Text(f"{t.subject_key} / {t.kind}"),
            (t.fact_id or "")[:12],
            t.created_at[:19],
            (t.lifted_at or "")[:19],
            Text(t.reason or ""),
        )
    out.print(table)


def _lifted(t: TombstoneView) -> None:
    _line(f"lifted tombstone {t.tombstone_id} ({t.subject_key} / {t.kind}): the value may be current again")


def _review(queue: ReviewQueue) -> None:
    if not queue.items:
        _line("nothing awaits review")
        return
    table = _table("fact id", "recorded", "subject / kind", "trust", "origin", "text", "scope")
    for item in queue.items:
        fact, scope = item.fact, item.scope
        table.add_row(
            fact.id[:12],
            fact.recorded_at[:19],
            Text(f"{fact.event['subjectKey']} / {fact.event['kind']}"),
            fact.event["trustClass"],
            fact.origin,
            Text(fact.event["text"]),
            Text(f"{scope.agent_id}/{scope.profile_id}/{scope.participant_scope_hash[:8]}"),
        )
    out.print(table)


def _audit(page: AuditPage) -> None:
    table = _table("seq", "at", "action", "actor", "target", "reason")
    for e in page.entries:
        table.add_row(
            str(e.seq),
            e.at[:19],
            e.action,
            f"{e.actor_role}:{e.actor_key_id or '-'}",
            (e.target_id or "")[:12],
            Text(e.reason or ""),
        )
    out.print(table)


def _verdict(verdict: AuditVerdict) -> None:
    for warning in verdict.warnings:
        err.print(Text.assemble(("warning", "yellow"), f": {warning}"))
    if verdict.verified:
        _line(
            f"audit chain of {verdict.tenant!r} verified: {verdict.checked} entries, "
            f"{verdict.memories_checked or 0} memories, {verdict.rows_checked or 0} rows"
        )
        return
    if verdict.row_id is not None or verdict.memory_id is not None:
        what = f"{verdict.row_kind or 'memory'} {verdict.row_id or verdict.memory_id} altered"
        fields = f" ({', '.join(verdict.fields)})" if verdict.fields else ""
        err.print(Text.assemble((what + fields, "red"), f": {verdict.problem}"))
        return
    err.print(
        Text.assemble(
            (f"audit chain broken at entry {verdict.broken_seq}", "red"),
            f": {verdict.problem} ({verdict.checked} entries verified before it)",
        )
    )


def _scopes(listing: ScopeList) -> None:
    if not listing.scopes:
        _line("no scope this key may name holds memories")
        return
    table = _table(
        "scope key",
        "agent / profile",
        "privacy",
        "participant",
        "sandbox",
        "episodes",
        "facts",
        "pending",
        "last write",
    )
    for s in listing.scopes:
        table.add_row(
            s.scope_key[:12],
            Text(f"{s.agent_id} / {s.profile_id}"),
            s.privacy_scope,
            s.participant_scope_hash[:12],
            str(s.sandbox_eligible).lower(),
            str(s.episodes),
            str(s.facts),
            str(s.pending),
            s.last_recorded_at[:19],
        )
    out.print(table)
    if listing.next_cursor:
        _line(f"more: --cursor {listing.next_cursor}", "dim")


def _key_created(created: KeyCreated) -> None:
    print(created.key)  # the token alone, so a script can capture it


def _keys(listing: KeyList) -> None:
    table = _table("key id", "role", "grant", "label", "created", "revoked")
    for key in listing.keys:
        grant = ", ".join(f"{k}={v}" for k, v in key.grant.items()) or "tenant-wide"
        table.add_row(
            key.key_id, key.role, Text(grant), Text(key.label or ""), key.created_at[:19], (key.revoked_at or "")[:19]
        )
    out.print(table)


def _batch(result: EpisodeBatchResult) -> None:
    for i, item in enumerate(result.results):
        what = item.get("id") or item.get("message")
        _line(f"{i}: {item.get('status')} {item.get('outcome', item.get('code', ''))} {what}")
    refused = [item for item in result.results if int(item.get("status", 500)) >= 400]
    if refused:  # the batch was answered, but not all of it was stored: a script must notice
        raise typer.Exit(1)


def _recall(response: RecallResponse) -> None:
    if not response.memories:
        _line("no memories in this scope match")
    for i, memory in enumerate(response.memories, start=1):
        _line(
            f"{i}. {memory.score:.3f}  {memory.source}  trust={memory.trust_class}  status={memory.status}  "
            f"embedding={memory.embedding_state}"
        )
        _line(f"   {memory.text}")
        if memory.explain:
            arms = memory.explain.arms
            features = "  ".join(f"{k} +{v:.3f}" for k, v in memory.explain.features.items())
            _line(f"   dense {_arm(arms.get('dense'))}  lexical {_arm(arms.get('lexical'))}  {features}", "dim")


def _arm(arm: ArmExplain | None) -> str:
    return "-" if arm is None else f"#{arm.rank} {arm.raw:.3f} (+{arm.contribution:.3f}, weight {arm.weight:.2f})"


SHOWN: dict[type[Any], Callable[[Any], None]] = {
    Health: _health,
    WriteResponse: _written,
    MemoryView: _memory,
    FactList: _facts,
    EpisodeList: _episodes,
    FactHistory: _history,
    TombstoneList: _tombstones,
    TombstoneView: _lifted,
    ReviewQueue: _review,
    AuditPage: _audit,
    KeyCreated: _key_created,
    KeyList: _keys,
    EpisodeBatchResult: _batch,
    RecallResponse: _recall,
    AuditVerdict: _verdict,
    ScopeList: _scopes,
}
