"""An agent loop with EngramDB memory, over any OpenAI-compatible chat endpoint.

    python examples/agent_loop.py --chat-url http://127.0.0.1:8000/v1 --model my-model \\
        --engram-url http://127.0.0.1:8377 --engram-key "$KEY" --participant alice --session chat-1

Each line on stdin (or each ``--say``) is a user turn: recall before inference (300 ms at most,
empty if EngramDB is away), one chat completion, then the completed turn is queued in the outbox
under ``--profile-dir`` and delivered in the background. A line ``/remember SUBJECT KIND TEXT``
stores a fact instead. The key needs ``agentId``/``profileId`` matching the flags (a ``host``
key) or all five scope fields (an ``agent`` key). ``CHAT_API_KEY`` is sent to the chat endpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable

import httpx

from engramdb import HostContext, MemorySession, hash_scope

SYSTEM = "You are a concise, helpful assistant."
KEEP_MESSAGES = 20  # past this, the oldest turns are compacted away (and their last pair kept)


def chat(http: httpx.Client, model: str, messages: list[dict[str, str]]) -> str:
    """Return the assistant's reply from an OpenAI-compatible ``/chat/completions``."""
    response = http.post("/chat/completions", json={"model": model, "messages": messages})
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


def converse(memory: MemorySession, http: httpx.Client, model: str, lines: Iterable[str]) -> None:
    history: list[dict[str, str]] = []
    for line in (raw.strip() for raw in lines):
        if line.startswith("/remember "):
            subject, kind, text = line.removeprefix("/remember ").split(" ", 2)
            print(f"(remembered {memory.remember(subject, kind, text) or memory.last_skip})", flush=True)
            continue
        if not line:
            continue
        context = memory.before_inference(line)
        messages = [{"role": "system", "content": SYSTEM}]
        if context:
            messages.append({"role": "system", "content": context})
        messages += [*history, {"role": "user", "content": line}]
        try:
            reply = chat(http, model, messages)
        except httpx.HTTPError as error:
            memory.after_turn(line, "", ok=False)  # a failed turn is never stored
            print(f"(chat failed: {error})", file=sys.stderr, flush=True)
            continue
        memory.after_turn(line, reply)
        history += [{"role": "user", "content": line}, {"role": "assistant", "content": reply}]
        if len(history) > KEEP_MESSAGES:
            memory.before_compaction(history)
            history = history[-KEEP_MESSAGES // 2 :]
        print(reply, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chat-url", required=True, help="OpenAI-compatible base URL, e.g. .../v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--engram-url", default="http://127.0.0.1:8377")
    parser.add_argument("--engram-key", default=os.environ.get("ENGRAM_KEY") or os.environ.get("ENGRAM_API_KEY"))
    parser.add_argument("--agent-id", default="assistant")
    parser.add_argument("--profile-id", default="default")
    parser.add_argument("--participant", required=True, help="the user's id in your app (hashed)")
    parser.add_argument("--salt", default=os.environ.get("ENGRAM_SCOPE_SALT", ""), help="deployment salt")
    parser.add_argument("--session", required=True, help="this conversation's id")
    parser.add_argument("--profile-dir", default=".engram-agent", help="where the outbox lives")
    parser.add_argument("--say", action="append", help="a user turn (repeatable); default: stdin")
    args = parser.parse_args(argv)

    host = HostContext(
        agent_id=args.agent_id,
        profile_id=args.profile_id,
        participant_scope_hash=hash_scope(["example", args.participant], args.salt),
    )
    chat_key = os.environ.get("CHAT_API_KEY")
    headers = {"Authorization": f"Bearer {chat_key}"} if chat_key else {}
    with (
        httpx.Client(base_url=args.chat_url, headers=headers, timeout=120) as http,
        MemorySession(
            args.engram_url, api_key=args.engram_key, host=host, session_id=args.session, profile_dir=args.profile_dir
        ) as memory,
    ):
        converse(memory, http, args.model, args.say or sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
