"""Beliefs that change, through the real server: supersession, tombstones, time travel, audit."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tests.conftest import LiveServer
from tests.factories import fact_body


def _fact(
    http: httpx.Client,
    text: str,
    *,
    subject: str = "user",
    kind: str = "database",
    source: str = "turn-1",
    valid_from: str = "2026-01-01T00:00:00Z",
    **extra: Any,
) -> httpx.Response:
    return http.post(
        "/v1/facts",
        json=fact_body(text, subject=subject, kind=kind, sourceEventId=source, validFrom=valid_from, **extra),
    )


def _current(http: httpx.Client, subject: str = "user", kind: str = "database") -> list[str]:
    facts = http.get("/v1/facts", params={"subjectKey": subject, "kind": kind}).json()["facts"]
    return [f["event"]["text"] for f in facts]


def test_mongodb_postgresql_mongodb_again_is_refused_and_audited(server: LiveServer) -> None:
    """Memora's failure: a corrected-away value must not come back by being said again."""
    with server.client(server.key()) as http:
        first = _fact(http, "I prefer MongoDB for backend projects.", source="t1")
        assert first.status_code == 201 and first.json()["outcome"] == "created"
        second = _fact(
            http, "I prefer PostgreSQL for backend projects.", source="t2", valid_from="2026-02-01T00:00:00Z"
        )
        assert second.status_code == 201
        assert second.json()["outcome"] == "superseded"
        assert second.json()["supersededFactIds"] == [first.json()["id"]]
        assert second.json()["memory"]["supersedesFactId"] == first.json()["id"]
        # Said again later, in other words of the same value (case, spacing, punctuation).
        third = _fact(http, "i prefer  MongoDB for backend projects", source="t3", valid_from="2026-03-01T00:00:00Z")
        assert third.status_code == 409, third.text
        refusal = third.json()
        assert refusal["tombstoneId"] and refusal["tombstonedAt"] and refusal["field"] == "text"
        assert refusal["factId"] == first.json()["id"]
        assert _current(http) == ["I prefer PostgreSQL for backend projects."]
        old = http.get(f"/v1/facts/{first.json()['id']}").json()
        assert old["status"] == "superseded" and old["supersededByFactId"] == second.json()["id"]
        assert old["retiredAt"] is not None
    with server.client(server.key(role="reviewer")) as reviewer:
        entries = reviewer.get("/v1/audit").json()["entries"]
    actions = [e["action"] for e in entries if not e["action"].startswith(("key.", "record.", "relationship."))]
    assert actions == ["fact.write", "fact.write", "fact.supersede", "tombstone.create", "fact.refuse"]
    assert entries[-2]["targetId"] != first.json()["id"]  # the refused write names its own id


def test_review_policy_parks_a_tombstoned_value(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        policy = admin.put("/v1/policy", json={"tombstonePolicy": "review", "multiValuedKinds": []})
        assert policy.status_code == 200 and policy.json()["tombstonePolicy"] == "review"
    with server.client(server.key()) as http:
        _fact(http, "Uses MongoDB", source="a")
        _fact(http, "Uses PostgreSQL", source="b", valid_from="2026-02-01T00:00:00Z")
        parked = _fact(http, "Uses MongoDB", source="c", valid_from="2026-03-01T00:00:00Z")
        assert parked.status_code == 201 and parked.json()["outcome"] == "parked"
        assert parked.json()["memory"]["status"] == "pending_review"
        assert parked.json()["memory"]["statusReason"].startswith("value tombstoned by ")  # why it waits
        assert _current(http) == ["Uses PostgreSQL"]


def test_age_guard_keeps_an_older_fact_as_history(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        newer = _fact(http, "Lives in Berlin", kind="home", source="n", valid_from="2026-05-01T00:00:00Z")
        older = _fact(http, "Lives in Lisbon", kind="home", source="o", valid_from="2025-05-01T00:00:00Z")
        assert older.status_code == 201 and older.json()["outcome"] == "history"
        assert older.json()["memory"]["status"] == "superseded"
        assert older.json()["memory"]["supersededByFactId"] == newer.json()["id"]
        assert _current(http, kind="home") == ["Lives in Berlin"]
        # It held until the newer fact's validFrom.
        assert _texts_at(http, "2025-06-01T00:00:00Z", kind="home") == ["Lives in Lisbon"]
        assert _texts_at(http, "2026-06-01T00:00:00Z", kind="home") == ["Lives in Berlin"]
        # Its value was never current, so it is not tombstoned: asserting it anew is allowed.
        assert http.get("/v1/tombstones", params={"kind": "home"}).json()["tombstones"] == []
        # Positive control: retiring the current value does tombstone it, and the listing shows it.
        http.post(f"/v1/facts/{newer.json()['id']}/retract", json={"reason": "moved"})
        listed = http.get("/v1/tombstones", params={"kind": "home"}).json()["tombstones"]
        assert [t["factId"] for t in listed] == [newer.json()["id"]]


def test_multi_valued_kinds_coexist(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        _fact(http, "Likes tea", kind="likes", source="a")
        second = _fact(http, "Likes jazz", kind="likes", source="b")
        assert second.json()["outcome"] == "created"
        assert sorted(_current(http, kind="likes")) == ["Likes jazz", "Likes tea"]


def test_correct_and_retract_endpoints(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        original = _fact(http, "Deploys on Fridays", kind="deploy_day").json()["id"]
        corrected = http.post(
            f"/v1/facts/{original}/correct", json={"text": "Deploys on Tuesdays", "reason": "team changed the rota"}
        )
        assert corrected.status_code == 201, corrected.text
        new_id = corrected.json()["id"]
        assert corrected.json()["memory"]["supersedesFactId"] == original
        old = http.get(f"/v1/facts/{original}").json()
        assert old["status"] == "superseded" and old["statusReason"] == "team changed the rota"
        again = http.post(f"/v1/facts/{original}/correct", json={"text": "Deploys daily", "reason": "x"})
        assert again.status_code == 409 and again.json()["supersededByFactId"] == new_id
        assert _current(http, kind="deploy_day") == ["Deploys on Tuesdays"]  # control for the retract
        retracted = http.post(f"/v1/facts/{new_id}/retract", json={"reason": "no fixed day any more"})
        assert retracted.status_code == 200 and retracted.json()["status"] == "retracted"
        assert _current(http, kind="deploy_day") == []
        refused = _fact(http, "Deploys on Tuesdays", kind="deploy_day", source="later")
        assert refused.status_code == 409
        assert http.post(f"/v1/facts/{'0' * 64}/retract", json={"reason": "x"}).status_code == 404
        history = http.get(f"/v1/facts/{new_id}/history").json()
        assert [v["event"]["text"] for v in history["versions"]] == ["Deploys on Fridays", "Deploys on Tuesdays"]
        assert [v["status"] for v in history["versions"]] == ["superseded", "retracted"]
        assert {t["reason"] for t in history["tombstones"]} == {"team changed the rota", "no fixed day any more"}


def test_lifting_a_tombstone_is_for_reviewers_and_lets_the_value_back(server: LiveServer) -> None:
    agent = server.key()
    with server.client(agent) as http:
        fact_id = _fact(http, "Prefers vim", kind="editor").json()["id"]
        http.post(f"/v1/facts/{fact_id}/retract", json={"reason": "switched"})
        tomb = http.get("/v1/tombstones", params={"kind": "editor"}).json()["tombstones"][0]
        assert http.post(f"/v1/tombstones/{tomb['tombstoneId']}/lift", json={"reason": "x"}).status_code == 403
        assert _fact(http, "Prefers vim", kind="editor", source="again").status_code == 409
    with server.client(server.key(role="reviewer")) as reviewer:
        lifted = reviewer.post(f"/v1/tombstones/{tomb['tombstoneId']}/lift", json={"reason": "user switched back"})
        assert lifted.status_code == 200 and lifted.json()["liftReason"] == "user switched back"
        assert reviewer.post(f"/v1/tombstones/{tomb['tombstoneId']}/lift", json={"reason": "x"}).status_code == 409
        assert reviewer.get("/v1/audit").json()["entries"][-1]["action"] == "tombstone.lift"
    with server.client(agent) as http:
        back = _fact(http, "Prefers vim", kind="editor", source="again2")
        assert back.status_code == 201 and _current(http, kind="editor") == ["Prefers vim"]


def test_concurrent_corrections_leave_exactly_one_active_successor(server: LiveServer) -> None:
    token = server.key()
    with server.client(token) as http:
        target = _fact(http, "On-call is Ana", kind="oncall").json()["id"]
    statuses: list[int] = []
    barrier = threading.Barrier(8)

    def correct(i: int) -> None:
        with server.client(token) as client:
            barrier.wait()
            body = {"text": f"On-call is person {i}", "reason": "rota"}
            response = client.post(f"/v1/facts/{target}/correct", json=body)
            statuses.append(response.status_code)

    threads = [threading.Thread(target=correct, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [201] + [409] * 7
    with server.client(token) as http:
        current = _current(http, kind="oncall")
        assert len(current) == 1 and current[0].startswith("On-call is person")


def test_as_of_and_valid_at(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        first = _fact(http, "Team lead is Kim", kind="lead", valid_from="2026-01-01T00:00:00Z").json()
        time.sleep(0.02)
        between = first["memory"]["recordedAt"][:-1] + "9Z"  # just after the first was recorded
        time.sleep(0.02)
        _fact(http, "Team lead is Lee", kind="lead", source="2", valid_from="2026-06-01T00:00:00Z")
        params = {"subjectKey": "user", "kind": "lead"}
        assert _current(http, kind="lead") == ["Team lead is Lee"]
        then = http.get("/v1/facts", params={**params, "asOf": between}).json()["facts"]
        assert [f["event"]["text"] for f in then] == ["Team lead is Kim"]
        before_any = http.get("/v1/facts", params={**params, "asOf": "2020-01-01T00:00:00Z"}).json()
        assert before_any["facts"] == []
        with_history = http.get("/v1/facts", params={**params, "includeHistory": "true"}).json()["facts"]
        assert sorted(f["event"]["text"] for f in with_history) == ["Team lead is Kim", "Team lead is Lee"]
        # Valid time: a bounded fact holds inside its window only.
        _fact(
            http, "On leave", kind="availability", valid_from="2026-07-01T00:00:00Z", validUntil="2026-07-15T00:00:00Z"
        )
        inside = http.get("/v1/facts", params={"kind": "availability", "validAt": "2026-07-10T00:00:00Z"}).json()
        before = http.get("/v1/facts", params={"kind": "availability", "validAt": "2026-06-30T00:00:00Z"}).json()
        after = http.get("/v1/facts", params={"kind": "availability", "validAt": "2026-07-15T00:00:00Z"}).json()
        assert [f["event"]["text"] for f in inside["facts"]] == ["On leave"]
        assert before["facts"] == [] and after["facts"] == []
        # ... and since its validUntil has passed, it is not current now.
        assert _current(http, kind="availability") == []
        recalled = http.post("/v1/recall", json={"query": "team lead", "asOf": between}).json()["memories"]
        assert [m["text"] for m in recalled] == ["Team lead is Kim"]
        bad = http.get("/v1/facts", params={"asOf": "last week"})
        assert bad.status_code == 422 and bad.json()["field"] == "asOf"


def _texts_at(http: httpx.Client, valid_at: str, kind: str = "editor", **params: Any) -> list[str]:
    facts = http.get("/v1/facts", params={"kind": kind, "validAt": valid_at, **params}).json()["facts"]
    return sorted(f["event"]["text"] for f in facts)


def test_valid_at_answers_what_held_then_after_the_belief_changed(server: LiveServer) -> None:
    """A superseded fact held until its successor's validFrom: validAt finds it there, and only there."""
    with server.client(server.key()) as http:
        nano = _fact(http, "Uses nano", kind="editor", source="a", valid_from="2025-06-01T00:00:00Z").json()
        vim = _fact(http, "Uses vim", kind="editor", source="b", valid_from="2026-01-01T00:00:00Z").json()
        time.sleep(0.02)
        between = vim["memory"]["recordedAt"][:-1] + "9Z"  # after vim was recorded, before emacs
        time.sleep(0.02)
        emacs = _fact(http, "Uses emacs", kind="editor", source="c", valid_from="2026-02-01T00:00:00Z").json()
        assert emacs["outcome"] == "superseded" and emacs["supersededFactIds"] == [vim["id"]]
        assert _texts_at(http, "2025-09-01T00:00:00Z") == ["Uses nano"]
        assert _texts_at(http, "2026-01-15T00:00:00Z") == ["Uses vim"]
        assert _texts_at(http, "2026-03-01T00:00:00Z") == ["Uses emacs"]
        assert _texts_at(http, "2025-01-01T00:00:00Z") == []  # before anything held
        # History too: every version ever believed, but each only inside the window it held.
        assert _texts_at(http, "2026-01-15T00:00:00Z", includeHistory="true") == ["Uses vim"]
        stored = http.get(f"/v1/facts/{vim['id']}").json()
        assert stored["invalidAt"] == emacs["memory"]["validFrom"] and stored["validUntil"] is None
        assert http.get(f"/v1/facts/{nano['id']}").json()["invalidAt"] == vim["memory"]["validFrom"]
        # Recall reads the same valid time (on SQLite through the scope copy, not SQL).
        recalled = http.post("/v1/recall", json={"query": "which editor", "validAt": "2026-01-15T00:00:00Z"})
        assert [m["text"] for m in recalled.json()["memories"]] == ["Uses vim"]
        now = http.post("/v1/recall", json={"query": "which editor"}).json()["memories"]
        assert [m["text"] for m in now] == ["Uses emacs"]
        # As of a record time before emacs was written, vim was current and nothing replaced it yet,
        # whatever the valid time asked (its successor was unknown then).
        then = http.get("/v1/facts", params={"kind": "editor", "asOf": between}).json()["facts"]
        assert [(f["event"]["text"], f["status"], f["supersededByFactId"], f["invalidAt"]) for f in then] == [
            ("Uses vim", "active", None, None)
        ]
        assert _texts_at(http, "2026-03-01T00:00:00Z", asOf=between) == ["Uses vim"]
        recalled_then = http.post("/v1/recall", json={"query": "which editor", "asOf": between}).json()
        assert [(m["text"], m["status"]) for m in recalled_then["memories"]] == [("Uses vim", "active")]
        # History as it stood then: nano had been replaced (at vim's validFrom), vim not yet.
        assert _texts_at(http, "2026-03-01T00:00:00Z", asOf=between, includeHistory="true") == ["Uses vim"]
        assert _texts_at(http, "2025-09-01T00:00:00Z", asOf=between, includeHistory="true") == ["Uses nano"]


def test_a_fact_delivered_late_takes_its_place_in_valid_time(server: LiveServer) -> None:
    """An outbox replay can deliver February's fact after March's: each month still has one value."""
    with server.client(server.key()) as http:
        jan = _fact(http, "Uses vim", kind="editor", source="a", valid_from="2026-01-01T00:00:00Z").json()
        mar = _fact(http, "Uses helix", kind="editor", source="c", valid_from="2026-03-01T00:00:00Z").json()
        assert _texts_at(http, "2026-02-15T00:00:00Z") == ["Uses vim"]  # before the late one arrives
        feb = _fact(http, "Uses emacs", kind="editor", source="b", valid_from="2026-02-01T00:00:00Z").json()
        assert feb["outcome"] == "history"
        assert _texts_at(http, "2026-01-15T00:00:00Z") == ["Uses vim"]
        assert _texts_at(http, "2026-02-15T00:00:00Z") == ["Uses emacs"]
        assert _texts_at(http, "2026-03-15T00:00:00Z") == ["Uses helix"]
        assert _current(http, kind="editor") == ["Uses helix"]
        assert feb["memory"]["invalidAt"] == mar["memory"]["validFrom"]
        assert http.get(f"/v1/facts/{jan['id']}").json()["invalidAt"] == feb["memory"]["validFrom"]
    with server.client(server.key(role="reviewer")) as reviewer:
        closes = [e for e in reviewer.get("/v1/audit").json()["entries"] if e["action"] == "fact.close"]
    assert [e["targetId"] for e in closes] == [jan["id"]]


def test_one_value_holds_at_each_instant_whatever_the_order_of_arrival(server: LiveServer) -> None:
    """Late facts with the same validFrom as a held one, and a value said after the current one
    was retracted, each take their place: never two values of a single-valued slot at once."""
    with server.client(server.key()) as http:
        _fact(http, "Uses vim", kind="editor", source="a", valid_from="2026-01-01T00:00:00Z")
        _fact(http, "Uses helix", kind="editor", source="b", valid_from="2026-03-01T00:00:00Z")
        same = _fact(http, "Uses emacs", kind="editor", source="c", valid_from="2026-01-01T00:00:00Z").json()
        assert same["outcome"] == "history"  # the later word on January 1 wins, vim held nowhere
        assert _texts_at(http, "2026-02-01T00:00:00Z") == ["Uses emacs"]
        recalled = http.post("/v1/recall", json={"query": "editor vim emacs", "validAt": "2026-02-01T00:00:00Z"})
        assert [m["text"] for m in recalled.json()["memories"]] == ["Uses emacs"]
        # No current value: helix retracted, then a value from May is said. helix's window (from
        # March) is gone with its retraction; emacs held until May.
        helix = http.get("/v1/facts", params={"kind": "editor"}).json()["facts"][0]
        http.post(f"/v1/facts/{helix['id']}/retract", json={"reason": "never used it"})
        _fact(http, "Uses nano", kind="editor", source="d", valid_from="2026-05-01T00:00:00Z")
        assert _texts_at(http, "2026-06-01T00:00:00Z") == ["Uses nano"]
        assert _texts_at(http, "2026-02-01T00:00:00Z") == ["Uses emacs"]
        # History as it stands now (asOf now) sees the late fact too: it was never current, but known.
        now = http.get("/v1/facts", params={"kind": "editor"}).json()["facts"][0]["recordedAt"]
        assert _texts_at(http, "2026-02-01T00:00:00Z", asOf=now, includeHistory="true") == ["Uses emacs"]


def test_a_later_version_keeps_an_older_fact_in_history_even_once_retired(server: LiveServer) -> None:
    """The age guard weighs every version that held, not only the current one: after the newest
    was retracted, or a later one expired, an older fact is history that ends where they start."""
    with server.client(server.key()) as http:
        a = _fact(http, "Uses vim", kind="editor", source="a", valid_from="2026-01-01T00:00:00Z").json()
        b = _fact(http, "Uses helix", kind="editor", source="b", valid_from="2026-06-01T00:00:00Z").json()
        http.post(f"/v1/facts/{b['id']}/retract", json={"reason": "never used it"})
        c = _fact(http, "Uses nano", kind="editor", source="c", valid_from="2025-10-01T00:00:00Z").json()
        assert c["outcome"] == "history" and c["memory"]["invalidAt"] == a["memory"]["validFrom"]
        assert _texts_at(http, "2025-11-01T00:00:00Z") == ["Uses nano"]
        assert _texts_at(http, "2026-02-01T00:00:00Z") == ["Uses vim"]
        assert _current(http, kind="editor") == []  # nothing replaced the retracted value
        # A later version that expired (validUntil passed, swept by the worker) counts the same.
        _fact(
            http,
            "Uses zed",
            kind="ide",
            source="d",
            valid_from="2026-03-01T00:00:00Z",
            validUntil="2026-04-01T00:00:00Z",
        )
        deadline = time.monotonic() + 10
        while http.get("/v1/facts", params={"kind": "ide"}).json()["facts"]:
            assert time.monotonic() < deadline, "the expiry sweep did not run"
            time.sleep(0.05)
        late = _fact(http, "Uses code", kind="ide", source="e", valid_from="2026-01-01T00:00:00Z").json()
        assert late["outcome"] == "history"
        assert _texts_at(http, "2026-03-15T00:00:00Z", kind="ide") == ["Uses zed"]
        assert _texts_at(http, "2026-02-01T00:00:00Z", kind="ide") == ["Uses code"]


def test_supersedes_fact_id_in_another_slot_still_leaves_one_current_value(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        mine = _fact(http, "Uses vim", kind="editor", source="a").json()
        other = _fact(http, "Uses vscode", kind="ide", source="b").json()
        moved = _fact(
            http,
            "Uses emacs",
            kind="editor",
            source="c",
            valid_from="2026-02-01T00:00:00Z",
            supersedesFactId=other["id"],
        ).json()
        assert moved["outcome"] == "superseded"
        assert sorted(moved["supersededFactIds"]) == sorted([mine["id"], other["id"]])
        assert _current(http, kind="editor") == ["Uses emacs"] and _current(http, kind="ide") == []


def test_listing_and_recall_agree_to_the_microsecond_far_ahead(server: LiveServer) -> None:
    """SQLite's scope copy compares times as microsecond datetimes, like the SQL filter does."""
    with server.client(server.key()) as http:
        _fact(http, "Uses vim", kind="editor", source="a", valid_from="9000-01-01T00:00:00Z")
        _fact(http, "Uses helix", kind="editor", source="b", valid_from="9000-01-01T00:00:00.000010Z")
        for at, held in (("9000-01-01T00:00:00.000005Z", "Uses vim"), ("9000-01-01T00:00:00.000010Z", "Uses helix")):
            assert _texts_at(http, at) == [held]
            recalled = http.post("/v1/recall", json={"query": "uses editor", "validAt": at}).json()["memories"]
            assert [m["text"] for m in recalled] == [held], at


def test_several_values_of_a_multi_valued_kind_hold_together(server: LiveServer) -> None:
    """A late value of a multi-valued kind closes only what it replaces, not its siblings."""
    with server.client(server.key()) as http:
        tea = _fact(http, "Likes tea", kind="likes", source="a", valid_from="2026-01-01T00:00:00Z").json()
        green = http.post(
            f"/v1/facts/{tea['id']}/correct",
            json={"text": "Likes green tea", "reason": "more exact", "validFrom": "2026-06-01T00:00:00Z"},
        )
        assert green.status_code == 201, green.text  # tea held January to June
        coffee = _fact(http, "Likes coffee", kind="likes", source="b", valid_from="2026-03-01T00:00:00Z").json()
        late = _fact(
            http,
            "Likes cocoa",
            kind="likes",
            source="c",
            valid_from="2026-02-01T00:00:00Z",
            supersedesFactId=coffee["id"],
        ).json()
        assert late["outcome"] == "history"
        assert _texts_at(http, "2026-04-01T00:00:00Z", kind="likes") == ["Likes coffee", "Likes tea"]
        assert _texts_at(http, "2026-02-15T00:00:00Z", kind="likes") == ["Likes cocoa", "Likes tea"]
        assert _texts_at(http, "2026-07-01T00:00:00Z", kind="likes") == ["Likes coffee", "Likes green tea"]
        assert http.get(f"/v1/facts/{tea['id']}").json()["invalidAt"] == green.json()["memory"]["validFrom"]
    with server.client(server.key(role="reviewer")) as reviewer:
        entries = reviewer.get("/v1/audit").json()["entries"]
    assert any(e["action"] == "fact.write" and e["targetId"] == late["id"] for e in entries)  # the query sees it
    assert [e for e in entries if e["action"] == "fact.close"] == []


def test_a_correction_replaces_the_value_over_the_same_valid_time(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        wrong = _fact(http, "Uses vim", kind="editor", valid_from="2026-01-01T00:00:00Z").json()
        assert _texts_at(http, "2026-01-15T00:00:00Z") == ["Uses vim"]
        fixed = http.post(f"/v1/facts/{wrong['id']}/correct", json={"text": "Uses emacs", "reason": "misheard"})
        assert fixed.status_code == 201, fixed.text
        assert fixed.json()["memory"]["validFrom"] == wrong["memory"]["validFrom"]
        # vim never held: at every valid time it claimed, the corrected value is what held.
        assert _texts_at(http, "2026-01-15T00:00:00Z") == ["Uses emacs"]
        assert _texts_at(http, "2026-01-15T00:00:00Z", includeHistory="true") == ["Uses emacs"]
        backwards = http.post(
            f"/v1/facts/{fixed.json()['id']}/correct",
            json={"text": "Uses nano", "reason": "r", "validFrom": "2025-06-01T00:00:00Z"},
        )
        assert backwards.status_code == 422 and backwards.json()["field"] == "validFrom", backwards.text
        later = http.post(
            f"/v1/facts/{fixed.json()['id']}/correct",
            json={"text": "Uses helix", "reason": "switched", "validFrom": "2026-05-01T00:00:00Z"},
        )
        assert later.status_code == 201, later.text
        assert _texts_at(http, "2026-03-01T00:00:00Z") == ["Uses emacs"]
        assert _texts_at(http, "2026-06-01T00:00:00Z") == ["Uses helix"]


def test_expired_facts_are_marked_and_audited_by_the_worker(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        fact = _fact(http, "Promo code SPRING works", kind="promo", validUntil="2026-01-02T00:00:00Z").json()
        deadline = time.monotonic() + 10
        while (stored := http.get(f"/v1/facts/{fact['id']}").json())["status"] != "expired":
            assert time.monotonic() < deadline, stored
            time.sleep(0.05)
    assert stored["statusReason"] == "validUntil passed" and stored["retiredAt"]
    entries = server.store.tenant("t1").audit_entries(0, 1000)
    expiry = [e for e in entries if e.action == "fact.expire" and e.target_id == fact["id"]]
    assert len(expiry) == 1 and expiry[0].actor_role == "system"
