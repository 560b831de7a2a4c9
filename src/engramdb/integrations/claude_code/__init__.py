"""Claude Code's hooks: ``engram hook prompt|stop|pre-compact|session-end``.

hooks.py       the four hooks over ``MemorySession``: recall before a prompt, one episode per turn
transcript.py  Claude Code's JSONL transcript read as the person's turns (prompt, final answer, how it ended)
"""

from engramdb.integrations.claude_code.hooks import EVENTS, HookSettings, run_hook, store_turn, turn_to_store
from engramdb.integrations.claude_code.transcript import Turn, read_turns

__all__ = ["EVENTS", "HookSettings", "Turn", "read_turns", "run_hook", "store_turn", "turn_to_store"]
