"""Do the stored memories still say what was written? Checked by ``engram audit verify``.

The chain covers the audit entries, not the rows they describe: someone who edits a memory's
stored text directly would have the server serve the edited text while the chain still verified.
So every stored memory is checked against what cannot be edited without showing:

- its id is the contract's hash of its stored event (an edit of the event's text changes it);
- its searchable, served ``text`` is what its stored event makes (an edit of the column alone);
- an audit entry wrote it, and for an episode that entry's ``afterDigest`` is the digest of the
  stored event (so an edit of the summary, which the id does not cover, shows too).
"""

from __future__ import annotations

import json
from typing import Any

from engramdb.contract.canonical import event_id, fact_id, sha256_hex
from engramdb.core.audit import PAGE, AuditLog
from engramdb.core.rows import episode_text
from engramdb.storage.port import TenantStore

_MEMORY_KINDS = ("EPISODE", "MEMORY_FACT")  # an entry's targetKind when it acted on a memory


def first_altered_memory(tenant: TenantStore) -> tuple[int, str | None, str | None]:
    """Check every stored memory; return how many were checked, and the first that does not
    hold (its id) with what is wrong, or ``None, None``."""
    written = _write_digests(tenant)
    checked = 0
    for table, row in tenant.export_rows():
        if table != "memories":
            continue
        problem = _problem(row, written)
        if problem is not None:
            return checked, str(row["memory_id"]), problem
        checked += 1
    return checked, None, None


def _write_digests(log: AuditLog) -> dict[tuple[str | None, str], str | None]:
    # By scope and id: an episode's id does not cover its participant, so one id can be in two scopes.
    digests: dict[tuple[str | None, str], str | None] = {}
    after = 0
    while entries := log.audit_entries(after, PAGE):
        for entry in entries:
            if entry.target_kind in _MEMORY_KINDS and entry.target_id is not None:
                digests.setdefault((entry.scope_key, entry.target_id), entry.after_digest)  # the first: the write
        after = entries[-1].seq
    return digests


def _problem(row: dict[str, Any], written: dict[tuple[str | None, str], str | None]) -> str | None:
    memory_id, event_json, key = row["memory_id"], row["event_json"], (row["scope_key"], row["memory_id"])
    event = json.loads(event_json)
    if row["source"] == "EPISODE":
        computed = event_id(
            runtime=event["runtime"],
            agent_id=event["agentId"],
            profile_id=event["profileId"],
            external_session_id=event["externalSessionId"],
            turn_index=event["turnIndex"],
            user_text=event["userText"],
            assistant_text=event["assistantText"],
            source_event_id=event.get("sourceEventId"),
        )
        text = episode_text(event["summary"], event["userText"], event["assistantText"])
    else:
        computed = fact_id(
            runtime=event["runtime"],
            agent_id=event["agentId"],
            profile_id=event["profileId"],
            participant_scope_hash=event["participantScopeHash"],
            subject_key=event["subjectKey"],
            kind=event["kind"],
            source_event_id=event["sourceEventId"],
            text=event["text"],
        )
        text = event["text"]
    if computed != memory_id:
        return "its stored event does not hash to its id (the event was edited)"
    if row["text"] != text:
        return "its stored text is not what its event says (the text was edited)"
    if key not in written:
        return "no audit entry wrote it (it was inserted behind the server's back)"
    if row["source"] == "EPISODE" and written[key] != sha256_hex(event_json):
        return "its stored event does not match the digest its audit entry recorded"
    return None
