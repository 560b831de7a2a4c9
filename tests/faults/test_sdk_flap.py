"""The SDK host killed mid-stream while the server flaps (adapter-conformance, Delivery): a host
process writes 150 turns through MemorySession's durable outbox; it is killed with SIGKILL three
times and started again on the same profile folder, while a real ``engram serve`` is stopped
(SIGKILL and SIGTERM in turn) and started again and again. Once the outbox drains, every turn is
on the server exactly once, by id and by content, and nothing is left pending or dead.

``ENGRAM_FAULT_TURNS`` makes the run longer (``engram bench faults`` runs it outside pytest).
"""

from __future__ import annotations

import json
import os

import pytest

from engramdb_bench.faults import check
from engramdb_bench.faults.sdk_flap import FlapConfig, FlapRun, run
from engramdb_bench.faults.sdk_host import turn, turn_id

TURNS = max(150, int(os.environ.get("ENGRAM_FAULT_TURNS", "150")))
HOST_KILLS = 3 if TURNS <= 300 else 10


@pytest.fixture(scope="module")
def flapped(tmp_path_factory: pytest.TempPathFactory) -> FlapRun:
    return run(FlapConfig(turns=TURNS, host_kills=HOST_KILLS), tmp_path_factory.mktemp("sdk-flap"), progress=print)


@pytest.mark.slow
def test_every_turn_lands_exactly_once_after_host_kills_and_server_flaps(flapped: FlapRun) -> None:
    result = flapped.result
    print(json.dumps({k: v for k, v in result.items() if k != "checks"}))
    assert result["hostKills"] == HOST_KILLS and result["serverStops"] >= 2
    assert set(result["serverStopSignals"]) == {"SIGKILL", "SIGTERM"}  # and no failed restart
    # The host died with turns still queued at least once: delivery was cut off, not finished.
    assert max(result["pendingAtHostKills"]) > 0
    assert result["hostExit"] == 0 and result["hostSaid"][-2:] == ["appended all", "drained"]
    for name, verdict in result["checks"].items():
        assert verdict["found"] == verdict["expected"] == TURNS, (name, verdict["examples"])
        assert (verdict["lost"], verdict["duplicateIds"], verdict["duplicateContents"], verdict["unexpected"]) == (
            0,
            0,
            0,
            0,
        ), (name, verdict["examples"])
    assert result["outboxPending"] == 0 and result["outboxDeadLetters"] == 0
    # Each restarted host sent its last turn again: the same id, nothing queued twice.
    assert len(result["resentLastTurn"]) == HOST_KILLS
    assert all(line.endswith(" same") for line in result["resentLastTurn"])
    assert result["ok"] is True


@pytest.mark.slow
def test_the_check_counts_by_id_and_by_content(flapped: FlapRun) -> None:
    """Positive controls on the rows this run read: a turn never written is missing, and a turn
    stored twice under another id (a host that renumbered its turns) is a duplicate by content."""
    assert len(flapped.served) == TURNS
    never = turn_id(TURNS)
    missing = check.compare({**flapped.expected, never: turn(TURNS)[0]}, flapped.served)
    assert missing.missing == [never] and missing.found == TURNS
    renumbered = check.Row("z" * 64, turn(5)[0])
    twice = check.compare(flapped.expected, [*flapped.stored, renumbered])
    assert twice.duplicate_contents == [turn(5)[0]] and twice.unexpected == ["z" * 64] and not twice.ok
