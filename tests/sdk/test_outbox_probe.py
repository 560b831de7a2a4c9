"""While the server is down the outbox backs off as one queue (docs/sdk.md): its pause doubles with
each failure in a row whichever entry met it, and one probe goes out at a time, so a host with a
long queue does not multiply its attempts on a restarting server. Once the server answers, every
entry lands once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from engramdb.config import Settings
from engramdb.sdk.outbox import Outbox, OutboxSettings

from .helpers import FaultProxy, LateServer, make_episode, stored_episodes, wait_until

PENDING = 40
DOWN_SECONDS = 4.0


def test_a_long_queue_probes_a_down_server_once_at_a_time_and_lands_when_it_is_back(
    late: LateServer, settings: Settings, scope: dict[str, Any], tmp_path: Path
) -> None:
    key = late.key()
    proxy = FaultProxy(late.url)  # counts every attempt; the server behind it refuses until started
    events = [make_episode(f"Turn {i} of the migration plan.", scope, turn=i) for i in range(PENDING)]
    try:
        with Outbox(tmp_path / "p", url=proxy.url, api_key=key, settings=OutboxSettings(request_timeout=5.0)) as outbox:
            for event in events:
                assert outbox.append_episode(event)
            time.sleep(DOWN_SECONDS)
            attempts = len(proxy.seen)
            # The workers' first claims (4) go out before any failure is known; after them the pause
            # is at least 0.125 s doubling (0.25 s, jitter 0.5-1), so 4 s hold at most 6 probes more.
            # Each worker spending its own entries' attempts made 60-135 in such a span.
            assert 1 <= attempts <= OutboxSettings().concurrency + 6, attempts
            late.start()
            assert wait_until(lambda: outbox.store.count() == 0, timeout=60)  # the control: all land
        assert sorted(stored_episodes(settings.home)) == sorted(e.event_id for e in events)  # each once
    finally:
        proxy.close()
