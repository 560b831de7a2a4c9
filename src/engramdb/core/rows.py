"""Contract events as the rows the storage layer keeps."""

from __future__ import annotations

from engramdb import clock
from engramdb.contract.canonical import canonical_json
from engramdb.contract.events import Episode, Fact, Scope
from engramdb.contract.writes import SUMMARY_CHARS, default_summary
from engramdb.core import auth
from engramdb.storage.port import NewMemory

ANSWER_LINE = "Assistant: "


def episode_text(summary: str, user_text: str, assistant_text: str) -> str:
    """An episode as recall shows it: the summary, then what it does not already say."""
    lines = [summary]
    if user_text and user_text.strip() != summary.strip():
        lines.append(f"User: {user_text}")
    if assistant_text:
        lines.append(f"{ANSWER_LINE}{assistant_text}")
    return "\n".join(lines)


def holds_exchange(text: str) -> bool:
    """Whether an episode's text (as :func:`episode_text` makes it) holds the answer as well as the
    user's words: a whole exchange, as the SDK and the integrations write a turn, not one utterance.

    The answer line is there only with an answer; the user's words are the summary or a ``User:``
    line. An episode of the assistant's words alone has its answer's own summary (``default_summary``):
    one utterance. A user's text holding a line that starts ``Assistant: ``
    (a pasted transcript) reads as an exchange.
    """
    head, found, answer = text.partition(f"\n{ANSWER_LINE}")
    if not found:
        return False
    summary, user_line, user = head.partition("\nUser: ")
    if user_line and user.strip():
        return True
    read = answer[: 4 * SUMMARY_CHARS]  # enough of it for a summary cut at SUMMARY_CHARS ...
    if len(answer) > len(read) and len(" ".join(read.split())) <= SUMMARY_CHARS:
        read = answer  # ... unless it is mostly blanks (indented code)
    return summary != default_summary("", read)


def said(text: str) -> str:
    """What the person said in an episode's text (as :func:`episode_text` makes it): all before the answer."""
    cut = text.find(f"\n{ANSWER_LINE}")
    return text if cut < 0 else text[:cut]


def episode_row(event: Episode, scope: Scope, recorded_at: str) -> NewMemory:
    """Return the storage row of an episode (its text as ``episode_text`` makes it)."""
    text = episode_text(event.summary, event.user_text, event.assistant_text)
    return NewMemory(
        source="EPISODE",
        memory_id=event.event_id,
        scope=auth.scope_columns(scope),
        text=text,
        embed_text=text,
        trust_class=event.trust_class,
        origin="stated",
        status="active",
        confidence=1.0,
        observed_at=clock.normalize(event.observed_at),
        recorded_at=recorded_at,
        event_json=canonical_json(event.wire()),
        session_id=event.external_session_id,
        active_from=recorded_at,
        source_event_id=event.source_event_id,
    )


def fact_row(event: Fact, scope: Scope, recorded_at: str, origin: str = "stated") -> NewMemory:
    """Return the storage row of a fact; its subject and kind are searchable words too."""
    valid_from = clock.normalize(event.valid_from)
    return NewMemory(
        source="MEMORY_FACT",
        memory_id=event.fact_id,
        scope=auth.scope_columns(scope),
        text=event.text,
        embed_text=event.text,
        trust_class=event.trust_class,
        origin=origin,
        # The server owns the lifecycle; a fact that arrives inactive is history, not current.
        status="active" if event.active else "archived",
        confidence=event.confidence,
        observed_at=valid_from,
        recorded_at=recorded_at,
        event_json=canonical_json(event.wire()),
        subject_key=event.subject_key,
        kind=event.kind,
        valid_from=valid_from,
        valid_until=clock.normalize(event.valid_until) if event.valid_until else None,
        supersedes_id=event.supersedes_fact_id,
        active_from=recorded_at if event.active else None,
        source_event_id=event.source_event_id,
    )
