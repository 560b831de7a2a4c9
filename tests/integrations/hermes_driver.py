"""One Hermes Agent session in its own process, as Hermes runs one: ``python hermes_driver.py SESSION MESSAGE``.

HERMES_HOME names the Hermes home (config.yaml selects the memory provider; Hermes' own plugin
loader finds it in plugins/); CHAT_URL is the scripted model; HERMES_PLATFORM the platform
(``cli`` or ``cron``); HERMES_TOOLSETS the toolsets, comma-separated (none by default; ``memory``
offers the memory provider's tools). Prints one JSON line: the reply and the memory providers Hermes loaded.
"""

from __future__ import annotations

import json
import os
import sys

from run_agent import AIAgent  # type: ignore[import-untyped]  # hermes-agent ships no type information


def main(session_id: str, message: str) -> None:
    agent = AIAgent(
        base_url=os.environ["CHAT_URL"],
        api_key="scripted",
        model="scripted",
        quiet_mode=True,
        session_id=session_id,
        skip_context_files=True,
        max_iterations=3,
        enabled_toolsets=[t for t in os.environ.get("HERMES_TOOLSETS", "").split(",") if t],
        platform=os.environ.get("HERMES_PLATFORM", "cli"),
    )
    manager = agent._memory_manager
    providers = [p.name for p in manager.providers] if manager else []
    reply = agent.chat(message)
    agent.shutdown_memory_provider([{"role": "user", "content": message}, {"role": "assistant", "content": reply}])
    print(json.dumps({"reply": reply, "providers": providers}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
