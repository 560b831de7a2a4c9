"""Claude Code's session transcripts (``~/.claude/projects/<project>/<session id>.jsonl``), read with
the hooks' own reader (integrations/claude_code/transcript.py): a turn is the person's prompt and
the final answer, never a preamble, tool output, thinking or compaction summary; a turn the person
interrupted, whose tool call they refused, that failed or has no answer yet is left out. Its id is
the one the live hooks give it (the session id, the prompt's place and its uuid), so a session
captured live and then imported is stored once."""

from __future__ import annotations

from pathlib import Path

from engramdb.integrations.claude_code.transcript import read_entries, turns
from engramdb.integrations.imports.turns import ImportedTurn, Reading


def read(path: Path) -> Reading:
    entries = read_entries(path)
    ids = [e["sessionId"] for e in entries if isinstance(e.get("sessionId"), str) and e["sessionId"]]
    session = ids[0] if ids else path.stem
    reading = Reading()
    for turn in turns(entries):
        if not turn.completed:
            reading.skipped[f"a turn that was {turn.ended}"] += 1
            continue
        reading.turns.append(ImportedTurn(session, turn.ordinal, turn.prompt, turn.answer, turn.at, turn.uuid))
    return reading
