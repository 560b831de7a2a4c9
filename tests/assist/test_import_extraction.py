"""An import on a server with a model: extraction is queued for the imported episodes, in the batch's
transaction, and runs in the background; importing again queues nothing more (both backends)."""

from __future__ import annotations

from pathlib import Path

import httpx

from engramdb.integrations.imports import import_file
from engramdb.sdk import Client
from tests.assist.brain import Brain
from tests.assist.helpers import fact
from tests.assist.test_queue import wait_for
from tests.conftest import LiveServer

SAMPLE = Path(__file__).parents[1] / "imports" / "samples" / "chatgpt-conversations.json"
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}


def test_an_import_queues_extraction_that_runs_in_the_background(live: LiveServer, brain: Brain) -> None:
    brain.facts = [fact("user", "travel", "Lisbon for five days in May")]
    key = live.key(role="host", agentId="importer", profileId="default")
    with Client(live.url, key) as client:
        # Extraction by default, since the server has a model; two batches of two: a job each.
        report = import_file(client, "chatgpt", SAMPLE, scope=ALICE, batch_size=2)
        assert (report.created, report.extract, len(report.extraction_jobs)) == (4, True, 2)
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            jobs = [wait_for(http, job, "done", "failed") for job in sorted(report.extraction_jobs)]
        assert {j["state"] for j in jobs} == {"done"}
        episodes = {i for j in jobs for i in j["input"]["episodeIds"]}
        assert len(episodes) == 4  # every imported episode, once
        [lisbon] = [item for j in jobs for item in j["result"]["items"] if item.get("factId")]
        assert lisbon["sourceEventId"] in episodes  # the fact derived from an imported turn
        again = import_file(client, "chatgpt", SAMPLE, scope=ALICE, batch_size=2)
        assert (again.created, again.existing, again.extraction_jobs) == (0, 4, set())
    assert len(brain.asked("extract")) == 2
