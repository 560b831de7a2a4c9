"""The command line in the details a user meets: flags that say false, merged policy changes,
id prefixes from the tables, errors that name the option, files that are not there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli import invoke
from tests.conftest import LiveServer
from tests.factories import scope_fields

SCOPE = [
    "--agent-id",
    "coder",
    "--profile-id",
    "default",
    "--privacy",
    "private",
    "--participant",
    scope_fields()["participantScopeHash"],
    "--sandbox-eligible",
    "false",
]
ENV = {"ENGRAM_EMBEDDER": "hashing", "ENGRAM_URL": "", "ENGRAM_KEY": ""}


class Ran:
    def __init__(self, result: Any) -> None:
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        # In process, an EngramError reaches the runner (the `engram` entry point prints it).
        self.output = result.output + (str(result.exception) if result.exception else "")


def _cli(home: Path, *args: str, code: int = 0) -> Ran:
    result = invoke([*args, "--home", str(home)], env=ENV)
    assert result.exit_code == code, (args, result.output, result.exception)
    return Ran(result)


def _json(home: Path, *args: str) -> Any:
    return json.loads(_cli(home, *args, "--json").stdout)


def test_a_no_flag_sends_false(tmp_path: Path) -> None:
    kept = _json(
        tmp_path, "remember", "The user lives in Paris", "--subject", "user", "--kind", "city", "--no-active", *SCOPE
    )
    assert kept["memory"]["event"]["active"] is False and kept["memory"]["status"] == "archived"
    current = _json(tmp_path, "remember", "The user lives in Lyon", "--subject", "user", "--kind", "city", *SCOPE)
    assert current["memory"]["status"] == "active"  # positive control: without the flag it is current


def test_policy_set_changes_what_it_names_and_keeps_the_rest(live: LiveServer) -> None:
    base = ["--url", live.url, "--key", live.key(role="admin"), "--json"]
    first = invoke(["policy", "set", "--multi-valued-kinds", "hobby", *base], env=ENV)
    assert json.loads(first.stdout)["multiValuedKinds"] == ["hobby"], first.output
    second = invoke(["policy", "set", "--tombstone-policy", "review", *base], env=ENV)
    policy = json.loads(second.stdout)
    assert (policy["multiValuedKinds"], policy["tombstonePolicy"]) == (["hobby"], "review")


def test_ids_shown_in_tables_work_as_prefixes(tmp_path: Path) -> None:
    fact = _json(tmp_path, "remember", "The user lives in Paris", "--subject", "user", "--kind", "city", *SCOPE)
    short = fact["id"][:12]
    assert _json(tmp_path, "facts", "get", short, *SCOPE)["id"] == fact["id"]
    assert [v["id"] for v in _json(tmp_path, "facts", "history", short, *SCOPE)["versions"]] == [fact["id"]]
    missing = _cli(tmp_path, "facts", "get", "ffffffffffff", *SCOPE, code=1)
    assert "0 ids listed by `engram facts list` start with 'ffffffffffff'" in missing.output


def test_errors_name_the_option_to_fix(tmp_path: Path) -> None:
    missing = _cli(tmp_path, "remember", "x", *SCOPE, code=1)
    assert "subjectKey: Field required (--subject)" in missing.output
    file = _cli(tmp_path, "remember", "x", "--subject", "u", "--body", f"@{tmp_path}/nope.json", *SCOPE, code=1)
    assert "--body: cannot read" in file.output and "Traceback" not in file.output
    assert _cli(tmp_path, "remember", "x", "--subject", "u", *SCOPE).exit_code == 0  # positive control


def test_scope_options_win_over_the_body(tmp_path: Path) -> None:
    body = json.dumps({"agentId": "someone-else"})
    written = _json(tmp_path, "remember", "x", "--subject", "u", "--body", body, *SCOPE)
    assert written["memory"]["event"]["agentId"] == "coder"


def test_a_misspelt_tenant_is_refused_and_says_where_it_looked(tmp_path: Path) -> None:
    refused = _cli(tmp_path, "remember", "x", "--subject", "u", "--tenant", "defualt", *SCOPE, code=1)
    assert "no tenant named 'defualt'" in refused.output and str(tmp_path.resolve()) in refused.output
    assert not (tmp_path / "tenants" / "defualt.sqlite3").exists()
    asked = _cli(tmp_path, "remember", "x", "--subject", "u", "--tenant", "other", "--create-tenant", *SCOPE)
    assert asked.exit_code == 0 and (tmp_path / "tenants" / "other.sqlite3").exists()


def test_a_batch_with_a_refused_item_exits_1(tmp_path: Path) -> None:
    good = {
        "runtime": "custom",
        "externalSessionId": "s",
        "turnIndex": 0,
        "userText": "hi",
        "assistantText": "",
        "summary": "hi",
        "conversationKind": "direct",
        "visibility": "participant",
        "trustClass": "trusted",
        "originClass": "cli",
        "observedAt": "2026-08-18T00:00:00Z",
        "provenance": "test",
    }
    ok = _cli(tmp_path, "episodes", "write-batch", "--episodes", json.dumps([good]), *SCOPE)
    assert "0: 201 created" in ok.output
    mixed = _cli(
        tmp_path, "episodes", "write-batch", "--episodes", json.dumps([good, {"turnIndex": 1}]), *SCOPE, code=1
    )
    assert "0: 200 exists" in mixed.output and "1: 422 invalid_input" in mixed.output


def test_health_of_a_server_needs_no_key(live: LiveServer) -> None:
    result = invoke(["health", "--url", live.url, "--json"], env=ENV)
    assert result.exit_code == 0 and json.loads(result.stdout)["status"] == "ok", result.output
    refused = invoke(["facts", "list", "--url", live.url], env=ENV)
    assert refused.exit_code != 0 and "--url needs a key" in str(refused.exception or refused.output)


def test_a_host_key_without_a_scope_is_told_every_option_to_pass_at_once(live: LiveServer) -> None:
    base = ["--url", live.url, "--key", live.key(role="host", agentId="coder", profileId="default")]

    def remember(*scope: str) -> Ran:
        return Ran(invoke(["remember", "x", "--subject", "user", *scope, *base], env=ENV))

    bare = remember()
    assert bare.exit_code == 1
    assert "(pass --privacy, and --participant and --sandbox-eligible unless the key fixes them)" in bare.output
    some = remember("--privacy", "private")
    assert "(pass --participant, and --sandbox-eligible unless the key fixes them)" in some.output
    named = ["--privacy", "private", "--participant", scope_fields()["participantScopeHash"], "--sandbox-eligible"]
    assert remember(*named, "false").exit_code == 0  # positive control: the three options are enough
    admin = ["--url", live.url, "--key", live.key(role="admin")]
    grant = Ran(invoke(["keys", "create", "--role", "host", *admin], env=ENV))
    assert "(--agent-id)" in grant.output  # a new key's grant: what a host key needs, not the five fields
