"""A host process for the SDK fault run: ``count`` turns written through MemorySession's outbox.

    python -m engramdb_bench.faults.sdk_host PROFILE URL KEY COUNT PACE

Prints ``appended I`` once turn I is on disk, ``appended all``, then ``drained`` when the outbox
is empty, and exits. It is killed with SIGKILL at moments the run chooses, and started again on
the same profile folder: it then resumes at the turn its session state says comes next, first
sending the last turn again (a host that never heard whether its last write was taken), which
must give the same id and queue nothing.
"""

from __future__ import annotations

import sys
import time

from engramdb.contract.canonical import event_id, hash_scope
from engramdb.sdk import HostContext, MemorySession, OutboxSettings

SESSION = "flap-session"
HOST = HostContext(
    agent_id="flap-agent", profile_id="flap-profile", participant_scope_hash=hash_scope(["faults", "participant"])
)
# Quick retries: the server comes back within seconds, and the run should not wait out the
# reference backoff (tests/sdk/test_outbox.py holds the reference numbers).
SETTINGS = OutboxSettings(max_pending=20_000, backoff_base=0.05, backoff_cap=0.5, rest_seconds=0.5, request_timeout=5.0)


def turn(i: int) -> tuple[str, str]:
    return f"Flap test turn {i}: the value of cell {i} is {i * 13}.", f"Stored cell {i}."


def turn_id(i: int) -> str:
    """The episode id turn ``i`` must be stored under (computed here, not by the SDK)."""
    user, assistant = turn(i)
    return event_id(
        runtime=HOST.runtime,
        agent_id=str(HOST.agent_id),
        profile_id=str(HOST.profile_id),
        external_session_id=SESSION,
        turn_index=i,
        user_text=user,
        assistant_text=assistant,
    )


def main(profile: str, url: str, key: str, count: str, pace: str) -> int:
    session = MemorySession(
        url, api_key=key, host=HOST, session_id=SESSION, profile_dir=profile, outbox=SETTINGS, start_timeout=1.0
    )
    assert session.outbox is not None, session.degraded
    resumed = session.turn_index
    print(f"started at {resumed}", flush=True)
    if resumed > 0:
        again = session.after_turn(*turn(resumed - 1))
        print(f"resent {resumed - 1} {'same' if again == turn_id(resumed - 1) else f'DIFFERENT {again}'}", flush=True)
    for i in range(resumed, int(count)):
        if session.after_turn(*turn(i)) is None:
            print(f"refused {i}: {session.last_skip}", flush=True)
            return 2
        print(f"appended {i}", flush=True)
        time.sleep(float(pace))
    print("appended all", flush=True)
    while not session.outbox.flush(1.0):
        pass
    print("drained", flush=True)
    return 0 if session.close() else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
