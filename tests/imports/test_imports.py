"""Imports through REST (the SDK's ``Client`` and ``import_file``, a real server, both backends):
each format's sample (tests/imports/samples, written after each product's published format) becomes
one episode per turn, at its original time, with secrets redacted; importing it again writes nothing;
a dry run counts and writes nothing; a Claude Code turn the live hooks stored is not stored twice."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engramdb.errors import ModelNotConfiguredError
from engramdb.integrations.imports import import_file
from engramdb.sdk import Client
from tests.conftest import LiveServer
from tests.integrations.test_claude_code import Hooks

SAMPLES = Path(__file__).parent / "samples"
ALICE = {"userId": "alice", "privacyScope": "private", "sandboxEligible": False}


def case(
    source: str,
    sample: str,
    sessions: dict[str, list[str]],
    skipped: dict[str, int],
    secrets: tuple[str, ...],
    gone: str = "",
) -> Any:
    """A sample: each session's turns' observedAt in order, what is passed over, what must not be stored."""
    return pytest.param(source, sample, sessions, skipped, secrets, gone, id=sample)


CASES = [
    case(
        "claude-code",
        "claude-code.jsonl",
        {
            "b6f3d1e2-41a7-4c39-8e0d-5a2f7c9b1e64": [
                "2026-10-14T08:12:03.412000Z",
                "2026-10-14T08:14:40.256000Z",
                "2026-10-14T08:20:11.083000Z",
            ]
        },
        {"a turn that was local": 1, "a turn that was interrupted": 1},
        ("sk_test_51HqLyjWDarjtT1zdp7dcXGXk2ZJpBm4u", "/home/dev/billing/app/retry.py"),
        gone="Let me read the retry worker first.",  # a preamble before a tool call
    ),
    case(
        "chatgpt",
        "chatgpt-conversations.json",
        {
            "chatgpt:6702a9f4-3c18-8007-b5e1-4d2f9a7c0e63": [
                "2024-10-06T10:59:13.018295Z",
                "2024-10-06T11:29:16.718295Z",
            ],
            "chatgpt:6710c3b8-9a42-800c-8f73-1e5d2c9a4b06": [
                "2024-10-17T07:53:24.802113Z",
                "2024-10-17T07:54:59.402113Z",
            ],
        },
        {"a system, hidden or non-text message": 5},
        ("Hunter2-prod",),
        gone="Cervejaria Ramiro is the classic",  # the answer the person regenerated away
    ),
    case(
        "mem0",
        "mem0-get-all.json",
        {
            "mem0:alice": [
                "2025-12-18T16:03:45.002771Z",
                "2026-01-09T08:30:12.441590Z",
                "2026-02-11T09:42:17.309214Z",
                "2026-02-11T09:42:17.336105Z",
            ],
            "mem0:chat-2026-03-01": ["2026-03-01T20:14:03.871442Z", "2026-03-01T20:14:03.902318Z"],
        },
        {},
        ("Tr4ns-Br1dge!",),
    ),
    case(
        "zep",
        "zep-episodes.json",
        {
            "zep:thread_7f3a2c91": ["2026-05-10T09:14:31.183045Z", "2026-05-12T07:48:19.640752Z"],
            "zep:default": ["2026-05-12T07:49:10.002518Z"],
        },
        {"a system message": 1, "a json episode (data, not a turn)": 1, "a user message with no answer yet": 1},
        (),
        gone="Northwind Bikes",  # the system message
    ),
    case(
        "zep",
        "graphiti-episodes.json",
        {"zep:support-jane": ["2026-06-02T13:20:00.000000Z", "2026-06-02T13:23:30.000000Z"]},
        {},
        (),
    ),
    case(
        "jsonl",
        "chat.jsonl",
        {
            "kitchen-reno": [
                "2026-04-03T18:02:15.000000Z",
                "2026-04-03T18:05:40.000000Z",
                "2026-04-03T18:09:12.000000Z",
            ],
            "garden": ["2025-04-29T07:20:00.000000Z", "2025-04-29T05:41:02.000000Z"],
        },
        {"a system message": 1, "a tool message": 1},
        ("Sp1ceRack!2026",),
        gone="friendly home-improvement assistant",  # the system prompt
    ),
]


@pytest.fixture
def admin_key(server: LiveServer) -> str:
    return server.key(role="admin")


@pytest.fixture
def engram(server: LiveServer) -> Iterator[Client]:
    with Client(server.url, server.key(role="host", agentId="importer", profileId="default")) as client:
        yield client


def stored(client: Client) -> list[dict[str, Any]]:
    """Every episode of Alice's scope, as the server gives them."""
    scope = client.resolve_scope(ALICE).scope
    episodes = client.list_episodes(scope=scope, limit=1000).episodes
    return [e.model_dump(by_alias=True, mode="json") for e in episodes]


def head(server: LiveServer, admin_key: str) -> int:
    with server.client(admin_key) as http:
        return int(http.get("/v1/changes").json()["head"])


@pytest.mark.parametrize("source, sample, sessions, skipped, secrets, gone", CASES)
def test_each_turn_is_an_episode_at_its_time_and_a_second_import_writes_nothing(
    server: LiveServer,
    engram: Client,
    admin_key: str,
    source: str,
    sample: str,
    sessions: dict[str, list[str]],
    skipped: dict[str, int],
    secrets: tuple[str, ...],
    gone: str,
) -> None:
    raw = (SAMPLES / sample).read_text(encoding="utf-8")
    report = import_file(engram, source, SAMPLES / sample, scope=ALICE)
    count = sum(len(times) for times in sessions.values())
    assert (report.created, report.existing, report.refused, dict(report.skipped)) == (count, 0, [], skipped)
    assert report.extract is False and report.extraction_jobs == set()  # no model: the episodes alone
    episodes = stored(engram)
    found: dict[str, list[tuple[int, str]]] = {}
    for e in episodes:
        found.setdefault(e["event"]["externalSessionId"], []).append(
            (e["event"]["turnIndex"], e["event"]["observedAt"])
        )
    assert {s: [t for _, t in sorted(turns)] for s, turns in found.items()} == sessions
    text = json.dumps(episodes)
    for secret in secrets:
        assert secret in raw and secret not in text, secret  # in the file, not in the store
    assert not gone or (gone in raw and gone not in text)
    before = head(server, admin_key)
    again = import_file(engram, source, SAMPLES / sample, scope=ALICE)
    assert (again.created, again.existing, again.refused) == (0, count, [])
    assert head(server, admin_key) == before and len(stored(engram)) == count  # nothing written, nothing audited


def test_a_dry_run_counts_what_would_be_written_and_writes_nothing(
    server: LiveServer, engram: Client, admin_key: str
) -> None:
    sample = SAMPLES / "chatgpt-conversations.json"
    import_file(engram, "chatgpt", sample, scope=ALICE, dry_run=True)  # the participant's salt is made once
    before = head(server, admin_key)
    dry = import_file(engram, "chatgpt", sample, scope=ALICE, dry_run=True)
    assert (dry.dry_run, dry.episodes, dry.created, dry.existing, dry.extract) == (True, 4, 4, 0, None)
    assert stored(engram) == [] and head(server, admin_key) == before
    import_file(engram, "chatgpt", sample, scope=ALICE)
    assert len(stored(engram)) == 4  # positive control: the real import writes what the dry run counted
    after = import_file(engram, "chatgpt", sample, scope=ALICE, dry_run=True)
    assert (after.created, after.existing) == (0, 4)


def test_extraction_asked_of_a_server_without_a_model_is_refused_before_anything_is_written(engram: Client) -> None:
    with pytest.raises(ModelNotConfiguredError):
        import_file(engram, "mem0", SAMPLES / "mem0-get-all.json", scope=ALICE, extract=True)
    assert stored(engram) == []
    plain = import_file(engram, "mem0", SAMPLES / "mem0-get-all.json", scope=ALICE, extract=False)
    assert (plain.created, plain.extract) == (6, False)


def test_a_claude_code_turn_its_hooks_stored_is_not_imported_again(
    server: LiveServer, tmp_path: Path, admin_key: str
) -> None:
    key = server.key(role="host", agentId="claude-code", profileId="default")
    hooks = Hooks(server, tmp_path, key)
    hooks.transcript.write_text((SAMPLES / "claude-code.jsonl").read_text())
    session = "b6f3d1e2-41a7-4c39-8e0d-5a2f7c9b1e64"
    final = "Three retries, one hour apart, then the invoice is marked past due and the customer gets an email."
    given = {
        "session_id": session,
        "last_assistant_message": final + " That is what RETRY_LIMIT = 3 in the config says.",
    }
    assert hooks.run("stop", "stop.json", given).returncode == 0  # the live hook stored the last turn
    with Client(server.url, key) as client:
        assert [e["event"]["turnIndex"] for e in stored(client)] == [4]
        report = import_file(client, "claude-code", SAMPLES / "claude-code.jsonl", scope=ALICE)
        assert (report.created, report.existing) == (2, 1)
        assert sorted(e["event"]["turnIndex"] for e in stored(client)) == [0, 1, 4]
