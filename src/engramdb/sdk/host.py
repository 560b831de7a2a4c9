"""What the host says about a conversation, and whether memory may be used in it.

Scope comes only from host metadata (``HostContext``), never from prompt or model text. The
verdict fails closed: a missing or blank scope field, a malformed session id, a group or channel
conversation, an automated trigger (cron, heartbeat, hook, ...), a subagent or any non-primary
run gets neither recall nor writes; a sandboxed run gets no writes and recalls only when the
scope is ``sandboxEligible``. Session keys are refused as OpenClaw's adapter refuses them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import ValidationError

from engramdb.contract.events import ConversationKind, Runtime, Scope

REFUSED_SESSION_KEY = re.compile(
    r":(?:group|channel|active-memory|cron|heartbeat|hook|node|subagent)(?::|$)|:incognito:"
)
REFUSED_SESSION_NAMES = frozenset({"global", "unknown"})
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=#-]{0,255}")
INTERACTIVE_TRIGGERS = frozenset({"user"})


@dataclass(frozen=True)
class HostContext:
    """Host metadata for one conversation: the five scope fields and what kind of run this is.

    ``participant_scope_hash`` is ``hash_scope(parts, salt)`` of the participant's identity
    with a deployment salt, never a raw id; or give ``participant_id`` (the raw id) and the
    session asks the server for the hash at start (the server's salt never leaves it).
    ``session_key`` is the host's routing key (for OpenClaw, e.g. ``agent:main:discord:dm:42``);
    ``trigger`` is ``user`` for a person's turn and anything else (``cron``, ``heartbeat``,
    ``hook``, ``automation``) for automated runs.
    """

    agent_id: str | None = None
    profile_id: str | None = None
    participant_scope_hash: str | None = None
    participant_id: str | None = None  # the user's own id: the server derives the hash (sdk/start.py)
    privacy_scope: str = "private"
    sandbox_eligible: bool = False
    runtime: str = "custom"
    conversation_kind: str = "direct"
    channel_id_hash: str | None = None
    session_key: str | None = None
    trigger: str = "user"
    is_subagent: bool = False
    is_primary: bool = True
    sandboxed: bool = False


@dataclass(frozen=True)
class Unresolved:
    """The scope of a host that names its participant by the raw id the server has not hashed yet.

    Writes under it are queued with ``userId`` in their bodies, on the host's disk (the outbox
    folder), and the server hashes the id with the tenant's secret salt when it takes them. An
    episode's eventId does not cover the participant, so it is known at once; a fact's factId does,
    so the server computes it.
    """

    agent_id: str
    profile_id: str
    privacy_scope: str
    sandbox_eligible: bool
    user_id: str = field(repr=False)  # the raw id: on the host's disk and to the server, nowhere else

    def wire(self) -> dict[str, Any]:
        """The scope fields of a write body, the participant as ``userId``."""
        return {
            "agentId": self.agent_id,
            "profileId": self.profile_id,
            "privacyScope": self.privacy_scope,
            "sandboxEligible": self.sandbox_eligible,
            "userId": self.user_id,
        }


@dataclass(frozen=True)
class Verdict:
    """What a session may do, and why not when it may not.

    ``pending`` is set when the participant is known only by its raw id: ``scope`` is None (recall
    waits for the server's hash) and writes, when allowed, queue under ``pending``.
    """

    scope: Scope | None
    can_read: bool
    can_write: bool
    reason: str | None = None
    pending: Unresolved | None = None

    @property
    def target(self) -> Scope | Unresolved | None:
        """Where a write goes: the scope, the scope still to be resolved, or nowhere."""
        return (self.scope or self.pending) if self.can_write else None


def _refuse(reason: str, scope: Scope | None = None) -> Verdict:
    return Verdict(scope, False, False, reason)


def scope_of(context: HostContext) -> Scope | str:
    """Return the scope the host metadata names, or why it names none."""
    fields: dict[str, Any] = {
        "agentId": context.agent_id,
        "profileId": context.profile_id,
        "privacyScope": context.privacy_scope,
        "participantScopeHash": context.participant_scope_hash,
        "sandboxEligible": context.sandbox_eligible,
    }
    missing = [k for k, v in fields.items() if v is None or (isinstance(v, str) and not v.strip())]
    if missing == ["participantScopeHash"] and context.participant_id:
        return "participant not resolved yet: the server has not answered for participant_id"
    if missing:
        return f"missing host metadata: {', '.join(missing)}"
    try:
        return Scope.model_validate(fields)
    except ValidationError as error:
        where = ".".join(str(p) for p in error.errors()[0]["loc"])
        return f"invalid host metadata: {where}"


def unresolved(context: HostContext) -> bool:
    """True when the host names its participant by a raw id the server has not hashed yet."""
    return context.participant_scope_hash is None and bool(context.participant_id and context.participant_id.strip())


def session_problem(session_id: str | None) -> str | None:
    """Return why ``session_id`` cannot name a session, or None if it can."""
    if session_id is None or not session_id.strip():
        return "missing session id"
    if session_id.lower() in REFUSED_SESSION_NAMES or not SESSION_ID.fullmatch(session_id):
        return f"malformed or ambiguous session id {session_id[:80]!r}"
    return None


def _context_problem(context: HostContext) -> str | None:
    key = context.session_key
    if key is not None and (key.strip().lower() in REFUSED_SESSION_NAMES or REFUSED_SESSION_KEY.search(key)):
        return f"session key {key[:80]!r} names a non-direct context"
    if context.runtime not in get_args(Runtime):
        return f"unknown runtime {context.runtime!r}"
    if context.conversation_kind not in get_args(ConversationKind):
        return f"{context.conversation_kind!r} conversations are not eligible"
    if context.conversation_kind == "shared" and context.privacy_scope != "shared":
        return "a shared conversation needs privacyScope 'shared'"
    if context.trigger not in INTERACTIVE_TRIGGERS:
        return f"automated ({context.trigger}) runs are not eligible"
    if context.is_subagent or not context.is_primary:
        return "subagent and non-primary runs are not eligible"
    return None


def judge(context: HostContext, session_id: str | None) -> Verdict:
    """Return whether a session in ``context`` may recall and write, failing closed.

    A participant named only by its raw id (``participant_id``, no hash yet) is judged as if its
    hash were known: what that context may write is queued under ``Verdict.pending``; nothing is
    recalled until the server has answered.
    """
    scope = scope_of(context)
    if isinstance(scope, str) and unresolved(context):
        known = judge(dataclasses.replace(context, participant_scope_hash="0" * 64), session_id)
        if known.scope is None or not known.can_write:
            return _refuse(known.reason or scope)
        pending = Unresolved(
            known.scope.agent_id,
            known.scope.profile_id,
            known.scope.privacy_scope,
            known.scope.sandbox_eligible,
            str(context.participant_id),
        )
        return Verdict(None, False, True, scope, pending)
    if isinstance(scope, str):
        return _refuse(scope)
    problem = session_problem(session_id) or _context_problem(context)
    if problem:
        return _refuse(problem, scope)
    if context.sandboxed:
        readable = scope.sandbox_eligible
        why = "sandboxed runs do not write" + ("" if readable else " and this scope is not sandboxEligible")
        return Verdict(scope, readable, False, why)
    return Verdict(scope, True, True)
