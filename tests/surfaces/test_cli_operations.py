"""Every operation's ``engram`` command, run on the data folder and against a running server.

The same tour runs twice over one store: once as the machine's operator on the data folder
(``ENGRAM_HOME`` / ``ENGRAM_DATABASE_URL``), once against the live server with ``--url`` and an
admin key. Each step reads the answer's JSON (``--json``); the tour must reach every command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engramdb.models.operations import OPERATIONS
from engramdb.models.operations.assist import ASSIST_OPERATIONS
from tests.cli import invoke
from tests.conftest import LiveServer
from tests.factories import episode_body, participant, scope_fields

Run = Callable[..., Any]
COMMANDS = {op.cli.command: op.name for op in OPERATIONS if op.cli is not None}


def _scope(tag: str) -> dict[str, Any]:
    return scope_fields(participantScopeHash=participant(tag))


def _scope_args(scope: dict[str, Any]) -> list[str]:
    return [
        "--agent-id",
        scope["agentId"],
        "--profile-id",
        scope["profileId"],
        "--privacy",
        scope["privacyScope"],
        "--participant",
        scope["participantScopeHash"],
        "--sandbox-eligible",
        "false",
    ]


def _runner(env: dict[str, str], extra: list[str], ran: set[str]) -> Run:

    def run(*args: str, as_json: bool = True) -> Any:
        words = tuple(a for a in args[:2] if not a.startswith("-"))
        ran.add(COMMANDS.get(words) or COMMANDS.get(words[:1]) or "?")
        result = invoke([*args, *(["--json"] if as_json else []), *extra], env=env)
        assert result.exit_code == 0, (args, result.output, result.exception)
        return json.loads(result.stdout) if as_json else result.stdout

    return run


def _tour(run: Run, tag: str, tmp_path: Path) -> None:
    scope = _scope(tag)
    s = _scope_args(scope)
    assert run("health")["status"] == "ok"
    written = run("episodes", "write", "--summary", f"Staging moved to Frankfurt ({tag})", "--session", "s1", *s)
    assert written["created"] and written["memory"]["source"] == "EPISODE"
    batch = run(
        "episodes",
        "write-batch",
        "--episodes",
        json.dumps([episode_body(f"turn {i} ({tag})", turn=i + 1, session="s1", scope=scope) for i in range(2)]),
    )
    assert [r["status"] for r in batch["results"]] == [201, 201]
    assert run("episodes", "get", written["id"], *s)["id"] == written["id"]
    assert len(run("episodes", "list", "--session", "s1", *s)["episodes"]) == 3
    fact = run("remember", f"The database is MongoDB ({tag})", "--subject", "user", "--kind", "database", *s)
    assert run("facts", "get", fact["id"], *s)["status"] == "active"
    # Structured facts (LangGraph's store): a JSON fact under a subject prefix, searched and listed.
    pref = run("remember", '{"v": {"color": "red"}}', "--subject", f"ns:prefs/{tag}", "--kind", "key:k1", *s)
    where = json.dumps([{"path": ["v", "color"], "op": "eq", "value": "red"}])
    found = run("facts", "search", "ns:prefs/", "--where", where, *s)["facts"]
    assert [f["fact"]["id"] for f in found] == [pref["id"]]
    assert run("facts", "subjects", "ns:prefs/", *s)["subjects"] == [f"ns:prefs/{tag}"]
    assert run("find", fact["id"])["event"]["subjectKey"] == "user"  # by id alone: the answer names its scope
    assert [f["id"] for f in run("facts", "list", "--subject", "user", *s)["facts"]] == [fact["id"]]
    new = run("facts", "correct", fact["id"], "--text", f"The database is PostgreSQL ({tag})", "--reason", "moved", *s)
    assert new["memory"]["supersedesFactId"] == fact["id"]
    assert [v["id"] for v in run("facts", "history", new["id"], *s)["versions"]] == [fact["id"], new["id"]]
    tombstone = run("tombstones", "list", *s)["tombstones"][0]
    assert run("tombstones", "lift", tombstone["tombstoneId"], "--reason", "fine again")["liftedAt"]
    assert run("facts", "retract", new["id"], "--reason", "gone", *s)["status"] == "retracted"
    parked = [
        run(
            "remember", f"The user likes {w} ({tag})", "--subject", "user", "--kind", "likes", "--origin", "derived", *s
        )["id"]
        for w in ("jazz", "opera", "techno")
    ]
    assert set(parked) <= {i["fact"]["id"] for i in run("review", "list")["items"]}
    assert run("review", "approve", parked[0][:12])["memory"]["status"] == "active"  # a prefix is enough
    assert run("review", "reject", parked[1], "--reason", "not said")["status"] == "rejected"
    assert run("review", "edit", parked[2], "--text", f"The user likes house ({tag})")["memory"]["status"] == "active"
    assert run("audit", "list", "--limit", "1000")["entries"]
    rejected = run("audit", "list", "--action", "review.reject", "--target-id", parked[1])["entries"]
    assert [(e["action"], e["targetId"]) for e in rejected] == [("review.reject", parked[1])]
    assert run("audit", "verify")["verified"]
    listed = run("scopes", "list")["scopes"]
    assert {"agentId": scope["agentId"], "participantScopeHash": scope["participantScopeHash"]}.items() <= next(
        s for s in listed if s["participantScopeHash"] == scope["participantScopeHash"]
    ).items()
    policy_file = tmp_path / f"policy-{tag}.json"
    policy_file.write_text(json.dumps(run("policy", "get")))
    policy = run("policy", "set", "--body", f"@{policy_file}", "--tombstone-policy", "refuse")
    assert policy["tombstonePolicy"] == "refuse"
    recalled = run("recall", "where is staging", "--explain", *s)
    assert recalled["memories"][0]["id"] == written["id"] and recalled["memories"][0]["explain"]
    assert run("recall", "staging", "--context", *s, as_json=False).startswith("Historical memory follows.")
    _knowledge_tour(run, s, tag)
    _aging_tour(run, s, written["id"], parked[0])
    _erasure_tour(run, s, scope, written["id"], new["id"], fact["id"])
    _feed_tour(run)
    created = run("keys", "create", "--role", "reviewer", "--label", tag)
    assert created["key"].startswith("egm.t1.")
    assert created["keyId"] in {k["keyId"] for k in run("keys", "list")["keys"]}
    assert f"revoked {created['keyId']}" in run("keys", "revoke", created["keyId"], as_json=False)
    resolved = run("hash-participant", "user-42")
    assert re.fullmatch(r"[0-9a-f]{64}", resolved["participantScopeHash"]) and resolved["tenant"] == "t1"
    assert run("hash-participant", "user-42", "--hash", as_json=False).strip() == resolved["participantScopeHash"]
    assert run("hash-participant", "user-43")["participantScopeHash"] != resolved["participantScopeHash"]


def _aging_tour(run: Run, s: list[str], episode: str, fact: str) -> None:
    assert run("facts", "mark", fact, "--pinned", *s)["pinned"] is True
    assert run("episodes", "mark", episode, "--importance", "0.9", *s)["importance"] == 0.9
    assert run("episodes", "archive", episode, "--reason", "stale", *s)["status"] == "archived"
    assert run("facts", "archive", fact, "--reason", "stale", *s)["status"] == "archived"
    assert run("episodes", "restore", episode, *s)["status"] == "active"
    assert run("facts", "restore", fact, "--reason", "asked again", *s)["status"] == "active"
    assert {j["name"] for j in run("jobs", "list")["jobs"]} <= {"usage", "aging", "copies"}
    assert run("jobs", "run-aging")["archived"] == 0
    assert {"bucket", "series"} <= set(run("usage", "--bucket", "day"))


def _erasure_tour(run: Run, s: list[str], scope: dict[str, Any], episode: str, fact: str, older: str) -> None:
    assert run("episodes", "delete", episode, "--dry-run", *s) == {"dryRun": True, "memories": [episode]}
    assert sorted(run("facts", "delete", fact, *s)["memories"]) == sorted([fact, older])  # every version
    exported = run("participants", "export", "--participant", scope["participantScopeHash"])
    assert exported["rows"] and {line["table"] for line in exported["rows"]} >= {"memories", "tombstones"}
    preview = run("forget", "--participant", scope["participantScopeHash"], "--dry-run")
    assert preview["dryRun"] and preview["memories"] >= 4
    done = run("forget", "--participant", scope["participantScopeHash"])
    assert (done["dryRun"], done["memories"]) == (False, preview["memories"])
    assert run("episodes", "list", *s)["episodes"] == [] and run("audit", "verify")["verified"]


def _feed_tour(run: Run) -> None:
    """The change feed, and an endpoint on a closed loopback port (nothing leaves the machine)."""
    assert run("changes", "list", "--limit", "5")["changes"][0]["seq"] >= 1
    hook = run("webhooks", "create", "http://127.0.0.1:9/hook", "--kinds", "created")
    assert hook["secret"].startswith("whsec_")
    assert hook["webhookId"] in {w["webhookId"] for w in run("webhooks", "list")["webhooks"]}
    assert run("webhooks", "dead-letters", hook["webhookId"])["deadLetters"] == []
    assert run("webhooks", "replay", hook["webhookId"])["replayed"] == []
    assert f"deleted {hook['webhookId']}" in run("webhooks", "delete", hook["webhookId"], as_json=False)


def _knowledge_tour(run: Run, s: list[str], tag: str) -> None:
    session = {
        "title": f"Billing kickoff ({tag})",
        "DECISION": [{"title": "Use TypeScript"}],
        "TASK": [{"title": "Write the invoice migration", "status": "open"}],
    }
    written = run("records", "write", "--label", "SESSION", "--data", json.dumps(session), "--merge-by", "title", *s)
    assert (written["created"], written["relationships"]) == (3, 2)
    again = run("records", "write", "--label", "SESSION", "--data", json.dumps(session), "--merge-by", "title", *s)
    assert (again["created"], again["unchanged"]) == (0, 3)  # the same import twice is one graph
    sid = written["records"][0]["id"]
    assert run("records", "get", sid, *s)["properties"]["title"] == session["title"]
    assert run("records", "update", sid, "--properties", '{"mood": "calm"}', *s)["version"] == 2
    assert [v["version"] for v in run("records", "history", sid, *s)["versions"]] == [1, 2]
    where = json.dumps({"status": "open", "SESSION": {"title": {"$contains": tag}}})
    tasks = run("records", "search", "--labels", "TASK", "--where", where, *s)
    assert [r["properties"]["title"] for r in tasks["records"]] == ["Write the invoice migration"]
    alice = run("records", "write", "--label", "ENTITY", "--data", '{"name": "Alice"}', *s)["records"][0]["id"]
    task = tasks["records"][0]["id"]
    assert run("records", "link", task, "MENTIONS", alice, *s)["type"] == "MENTIONS"
    assert {r["type"] for r in run("records", "relationships", task, *s)["relationships"]} == {"HAS_TASK", "MENTIONS"}
    assert run("records", "schema", *s)["labels"][0]["label"] == "DECISION"
    assert len(run("records", "export", "--labels", "SESSION", *s)["records"]) == 3
    assert run("records", "unlink", task, "MENTIONS", alice, *s)["deleted"] is True
    preview = run("records", "delete-where", "--labels", "ENTITY", "--where", '{"name": "Alice"}', "--dry-run", *s)
    assert alice in preview["records"] and preview["dryRun"]  # (the writes' derived ENTITY records too, issue 33)
    gone = run("records", "delete", sid, "--cascade", *s)
    assert len(gone["records"]) == 3 and not gone["dryRun"]


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_every_command_runs_on_the_data_folder_and_against_a_server(
    server: LiveServer, tmp_path: Path, mode: str
) -> None:
    ran: set[str] = set()
    env = {**server.cli_env(), "ENGRAM_EMBEDDER": "hashing"}
    server.store.tenant("t1", create=True)  # only the default tenant starts on first use
    extra = ["--tenant", "t1"] if mode == "local" else ["--url", server.url, "--key", server.key(role="admin")]
    if mode == "remote":
        for name in ("ENGRAM_HOME", "ENGRAM_DATABASE_URL"):  # nothing local to fall back on
            env.pop(name, None)
    _tour(_runner(env, extra, ran), mode, tmp_path)
    # The model-assisted commands need a model: tests/assist/test_cli_tour.py tours them with a scripted one.
    expected = set(COMMANDS.values()) - {op.name for op in ASSIST_OPERATIONS}
    assert ran == expected, expected - ran
