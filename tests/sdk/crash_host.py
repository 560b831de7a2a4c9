"""A host process for the crash test: ``write`` N turns through the outbox, or ``deliver``.

    python -m tests.sdk.crash_host write   PROFILE URL KEY N   # prints "appended N", then waits
    python -m tests.sdk.crash_host deliver PROFILE URL KEY     # prints "drained" when empty, exits

Both run until killed (``write``) or done (``deliver``); the test sends SIGKILL at its chosen
moment, so nothing here gets to clean up.
"""

from __future__ import annotations

import sys
import time

from engramdb.sdk import HostContext, MemorySession, OutboxSettings
from tests.factories import participant

SESSION = "crash-session"
SETTINGS = OutboxSettings(max_pending=2_000, backoff_base=0.05, rest_seconds=0.5)


def turn(i: int) -> tuple[str, str]:
    return f"Crash test turn {i}: the value of register {i} is {i * 7}.", f"Stored register {i}."


def main(mode: str, profile: str, url: str, key: str, count: str = "0") -> int:
    host = HostContext(agent_id="coder", profile_id="default", participant_scope_hash=participant("alice"))
    session = MemorySession(url, api_key=key, host=host, session_id=SESSION, profile_dir=profile, outbox=SETTINGS)
    if mode == "write":
        for i in range(int(count)):
            if session.after_turn(*turn(i)) is None:
                print(f"refused turn {i}: {session.last_skip}", flush=True)
                return 2
        print(f"appended {count}", flush=True)
        time.sleep(3600)
        return 0
    assert session.outbox is not None
    print("started", flush=True)
    while not session.outbox.flush(1.0):
        pass
    print("drained", flush=True)
    return 0 if session.close() else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
