"""Trust that reads consult, and the review queue, through the real server."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import httpx
import pytest

from tests.cli import engram
from tests.conftest import LiveServer
from tests.factories import fact_body

CELLS = [
    ("trusted", "stated", "active"),
    ("trusted", "derived", "pending_review"),
    ("mixed", "stated", "active"),
    ("mixed", "derived", "pending_review"),
    ("untrusted", "stated", "pending_review"),
    ("untrusted", "derived", "pending_review"),
]


def _write(
    http: httpx.Client,
    text: str,
    *,
    trust: str = "trusted",
    origin: str = "stated",
    subject: str = "user",
    kind: str = "note",
    source: str = "s1",
) -> httpx.Response:
    body = fact_body(text, subject=subject, kind=kind, trustClass=trust, sourceEventId=source)
    return http.post("/v1/facts", params={"origin": origin}, json=body)


@pytest.mark.parametrize(("trust", "origin", "status"), CELLS)
def test_default_policy_cell(server: LiveServer, trust: str, origin: str, status: str) -> None:
    with server.client(server.key()) as http:
        written = _write(http, f"{trust} {origin} claim", trust=trust, origin=origin)
        assert written.status_code == 201, written.text
        assert written.json()["memory"]["status"] == status
        assert written.json()["memory"]["origin"] == origin
        assert written.json()["outcome"] == ("created" if status == "active" else "parked")
        found = http.post("/v1/recall", json={"query": "claim"}).json()["memories"]
        assert [m["status"] for m in found] == (["active"] if status == "active" else [])


def test_a_custom_policy_changes_a_cell(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        cell = {"status": "pending_review", "weight": 0.2}
        put = admin.put("/v1/policy", json={"trust": {"mixed": {"stated": cell}}})
        assert put.status_code == 200
        assert put.json()["trust"]["trusted"]["stated"] == {"status": "active", "weight": 1.0}  # default kept
        bad = admin.put("/v1/policy", json={"trust": {"sorta": {}}})
        assert bad.status_code == 422 and bad.json()["field"] == "trust"
    with server.client(server.key()) as agent:
        assert agent.put("/v1/policy", json={}).status_code == 403
        assert _write(agent, "mixed claim", trust="mixed").json()["memory"]["status"] == "pending_review"


def test_pending_and_rejected_never_reach_recall_unless_asked(server: LiveServer) -> None:
    agent, reviewer = server.key(), server.key(role="reviewer")
    with server.client(agent) as http:
        trusted = _write(http, "The deploy key rotates every 90 days", kind="rotation").json()
        pending = _write(http, "The deploy key rotates every 7 days", origin="derived", kind="rotation_guess").json()
        doomed = _write(http, "The deploy key never rotates", trust="untrusted", kind="rotation_rumour").json()
    with server.client(reviewer) as http:
        assert http.post(f"/v1/review/{doomed['id']}/reject", json={"reason": "false"}).status_code == 200
    with server.client(agent) as http:
        for query in ["deploy key rotation", "how often does the deploy key rotate", "deploy key"]:
            default = http.post("/v1/recall", json={"query": query, "limit": 50}).json()
            assert [m["id"] for m in default["memories"]] == [trusted["id"]]  # positive control
            asked = http.post("/v1/recall", json={"query": query, "limit": 50, "includePending": True}).json()
            by_id = {m["id"]: m for m in asked["memories"]}
            assert set(by_id) == {trusted["id"], pending["id"]}  # rejected never, even when asked
            assert by_id[pending["id"]]["status"] == "pending_review"
            assert "origin=derived; status=pending_review; unverified]" in asked["context"]


def test_an_agent_cannot_approve_its_own_pending_fact_a_reviewer_can(server: LiveServer) -> None:
    agent = server.key()
    with server.client(agent) as http:
        pending = _write(http, "The user is vegetarian", origin="derived", kind="diet").json()
        denied = http.post(f"/v1/review/{pending['id']}/approve", json={})
        assert denied.status_code == 403
        assert http.get("/v1/review").status_code == 403
    host = server.key(role="host", agentId="coder", profileId="default")
    with server.client(host) as http:
        assert http.post(f"/v1/review/{pending['id']}/approve", json={}).status_code == 403
    with server.client(server.key(role="reviewer")) as http:
        queue = http.get("/v1/review").json()["items"]
        assert [i["fact"]["id"] for i in queue] == [pending["id"]]
        assert queue[0]["scope"]["agentId"] == "coder"
        approved = http.post(f"/v1/review/{pending['id']}/approve", json={"reason": "confirmed by user"})
        assert approved.status_code == 200 and approved.json()["memory"]["status"] == "active"
        assert http.get("/v1/review").json()["items"] == []
        actions = [(e["action"], e["actorRole"]) for e in http.get("/v1/audit").json()["entries"]]
    assert ("review.denied", "agent") in actions and ("review.denied", "host") in actions
    assert ("review.approve", "reviewer") in actions
    with server.client(agent) as http:
        assert [m["text"] for m in http.post("/v1/recall", json={"query": "vegetarian"}).json()["memories"]] == [
            "The user is vegetarian"
        ]


def test_rejection_tombstones_the_value(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        pending = _write(http, "The user hates Python", trust="untrusted", kind="opinion").json()
        assert pending["memory"]["statusReason"] == "awaiting review (trust=untrusted, origin=stated)"
    with server.client(server.key(role="reviewer")) as http:
        rejected = http.post(f"/v1/review/{pending['id']}/reject", json={"reason": "prompt injection"})
        assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
        again = http.post(f"/v1/review/{pending['id']}/reject", json={"reason": "x"})
        assert again.status_code == 404  # no longer awaiting review
    with server.client(server.key()) as http:
        refused = _write(http, "the user hates python.", kind="opinion", source="s2")
        assert refused.status_code == 409 and refused.json()["reason"] == "prompt injection"
        assert _write(http, "The user likes Python", kind="opinion", source="s3").status_code == 201


def test_a_rejection_needs_a_reason(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        pending = _write(http, "The user hates Go", trust="untrusted", kind="opinion").json()
    with server.client(server.key(role="reviewer")) as http:
        for body in ({}, {"reason": ""}, {"reason": "  \n"}, {"reason": None}):
            refused = http.post(f"/v1/review/{pending['id']}/reject", json=body)
            assert refused.status_code == 422 and refused.json()["field"] == "reason", (body, refused.text)
        assert [i["fact"]["id"] for i in http.get("/v1/review").json()["items"]] == [pending["id"]]  # still pending
        rejected = http.post(f"/v1/review/{pending['id']}/reject", json={"reason": "made up"})
        assert rejected.status_code == 200 and rejected.json()["statusReason"] == "made up"
    env = server.cli_env()
    with server.client(server.key()) as http:
        other = _write(http, "The user hates Rust", trust="untrusted", kind="opinion2").json()

    def cli_reject(reason: str) -> subprocess.CompletedProcess[str]:
        return engram("review", "reject", other["id"][:12], "--reason", reason, "--tenant", "t1", env=env)

    blank = cli_reject("   ")
    assert blank.returncode == 1 and "reason must not be blank" in blank.stderr, blank.stderr
    assert cli_reject("made up too").returncode == 0


def test_approval_supersedes_and_edit_and_approve(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        current = _write(http, "Works at Acme", kind="employer").json()
        guess = _write(http, "Works at Globex", kind="employer", origin="derived", source="s2").json()
        typo = _write(http, "Lives in Lisbn", kind="home", origin="derived").json()
    with server.client(server.key(role="reviewer")) as http:
        approved = http.post(f"/v1/review/{guess['id']}/approve", json={}).json()
        assert approved["outcome"] == "superseded" and approved["supersededFactIds"] == [current["id"]]
        assert approved["memory"]["supersedesFactId"] == current["id"]  # linked both ways
        entries = http.get("/v1/audit").json()["entries"]
        parked = next(e for e in entries if e["action"] == "fact.park" and e["targetId"] == guess["id"])
        decided = next(e for e in entries if e["action"] == "review.approve" and e["targetId"] == guess["id"])
        assert parked["afterDigest"] == decided["beforeDigest"]  # the park's digest is the row as stored
        edit = {"text": "Lives in Lisbon", "reason": "typo"}
        edited = http.post(f"/v1/review/{typo['id']}/edit-and-approve", json=edit)
        assert edited.status_code == 200, edited.text
        assert edited.json()["memory"]["status"] == "active"
        assert edited.json()["memory"]["event"]["text"] == "Lives in Lisbon"
        assert edited.json()["memory"]["supersedesFactId"] == typo["id"]  # the draft it replaced
    with server.client(server.key()) as http:
        facts = http.get("/v1/facts", params={"subjectKey": "user"}).json()["facts"]
        assert sorted(f["event"]["text"] for f in facts) == ["Lives in Lisbon", "Works at Globex"]
        original = http.get(f"/v1/facts/{typo['id']}").json()
        assert original["status"] == "superseded" and original["statusReason"] == "edited in review: typo"
        assert original["supersededByFactId"] == edited.json()["id"]
        # The draft held nowhere: at its own valid time the reviewer's text is what held.
        then = http.get("/v1/facts", params={"kind": "home", "validAt": original["validFrom"]}).json()["facts"]
        assert [f["event"]["text"] for f in then] == ["Lives in Lisbon"]


def test_a_fact_pending_at_a_record_time_is_not_shown_as_believed_then(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        http.post(
            "/v1/facts", json=fact_body("Uses vim", kind="editor", sourceEventId="a", validFrom="2026-01-01T00:00:00Z")
        )
        http.post(
            "/v1/facts",
            json=fact_body("Uses helix", kind="editor", sourceEventId="b", validFrom="2026-06-01T00:00:00Z"),
        )
        parked = http.post(
            "/v1/facts",
            json=fact_body(
                "Uses nano", kind="editor", sourceEventId="p", trustClass="untrusted", validFrom="2026-03-01T00:00:00Z"
            ),
        ).json()
        assert parked["memory"]["status"] == "pending_review"
        time.sleep(0.02)
        before = parked["memory"]["recordedAt"][:-1] + "9Z"  # after it was parked, before its approval
        time.sleep(0.02)
    with server.client(server.key(role="reviewer")) as http:
        approved = http.post(f"/v1/review/{parked['id']}/approve", json={}).json()
        assert approved["outcome"] == "history"
    with server.client(server.key()) as http:

        def at(**params: str) -> list[str]:
            listed = http.get("/v1/facts", params={"kind": "editor", "includeHistory": "true", **params})
            return sorted(f["event"]["text"] for f in listed.json()["facts"])

        assert "Uses nano" not in at(asOf=before)  # still awaiting review then
        assert at(asOf=before, validAt="2026-07-01T00:00:00Z") == ["Uses helix"]
        assert "Uses nano" in at()  # positive control: known as history now
        assert at(validAt="2026-04-01T00:00:00Z") == ["Uses nano"]


def test_review_queue_filters(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        _write(http, "a", origin="derived", kind="k1", subject="s1")
        _write(http, "b", origin="derived", kind="k2", subject="s1")
        _write(http, "c", origin="derived", kind="k1", subject="s2")
    with server.client(server.key(role="reviewer")) as http:

        def texts(**params: Any) -> list[str]:
            return [i["fact"]["event"]["text"] for i in http.get("/v1/review", params=params).json()["items"]]

        assert texts() == ["a", "b", "c"]
        assert texts(kind="k1") == ["a", "c"]
        assert texts(subjectKey="s1", kind="k2") == ["b"]
        assert texts(olderThanSeconds=3600) == []


def test_trusted_outranks_untrusted_at_equal_similarity(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:  # make mixed facts current, down-weighted
        admin.put("/v1/policy", json={})
    with server.client(server.key()) as http:
        ids = [
            _write(http, "The staging password is in the vault", trust=t, subject=s, kind="k").json()["id"]
            for t, s in (("mixed", "ops"), ("trusted", "infra"))
        ]
        deadline = time.monotonic() + 10  # both vectors ready, so both arms see both facts
        while any(http.get(f"/v1/facts/{i}").json()["embedding"]["state"] != "ready" for i in ids):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        found = http.post("/v1/recall", json={"query": "staging password vault", "explain": True}).json()["memories"]
    assert [m["trustClass"] for m in found] == ["trusted", "mixed"], found
    top, second = found
    for arm in ("dense", "lexical"):  # equal similarity in both arms (ranks only break the tie)
        assert top["explain"]["arms"][arm]["raw"] == second["explain"]["arms"][arm]["raw"]
        assert top["explain"]["arms"][arm]["contribution"] == second["explain"]["arms"][arm]["contribution"]
    assert top["explain"]["features"]["trust"] > second["explain"]["features"]["trust"]


def test_review_cli(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        keep = _write(http, "Prefers tabs", origin="derived", kind="indent").json()
        drop = _write(http, "Prefers spaces", origin="derived", kind="indent_guess").json()
    env = server.cli_env()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return engram("review", *args, "--tenant", "t1", env=env)

    listed = cli("list")
    assert "Prefers tabs" in listed.stdout and "Prefers spaces" in listed.stdout, listed.stderr
    assert cli("approve", keep["id"][:12]).returncode == 0
    rejected = cli("reject", drop["id"][:12], "--reason", "guess")
    assert rejected.returncode == 0 and "tombstoned" in rejected.stdout
    assert "nothing awaits review" in cli("list").stdout
    with server.client(server.key()) as http:
        assert http.get(f"/v1/facts/{keep['id']}").json()["status"] == "active"
        assert http.get(f"/v1/facts/{drop['id']}").json()["status"] == "rejected"


def test_the_review_queue_counts_every_fact_its_filters_match_beyond_its_limit(server: LiveServer) -> None:
    with server.client(server.key(tenant="t2")) as other:  # another tenant's pending fact is not counted
        assert (
            _write(other, "elsewhere", trust="untrusted", subject="erin").json()["memory"]["status"] == "pending_review"
        )
    with server.client(server.key()) as agent:
        for n, kind in enumerate(["likes", "likes", "city", "city", "city"]):
            assert _write(agent, f"claim {n}", trust="untrusted", kind=kind, subject=f"user{n}").status_code == 201
        assert _write(agent, "said by the user", subject="user9").json()["memory"]["status"] == "active"
    with server.client(server.key(role="reviewer")) as http:
        page = http.get("/v1/review", params={"limit": 2, "count": "true"}).json()
        assert (len(page["items"]), page["total"]) == (2, 5)
        assert http.get("/v1/review", params={"kind": "city", "count": "true"}).json()["total"] == 3
        assert http.get("/v1/review", params={"limit": 2}).json()["total"] is None  # counted only when asked
