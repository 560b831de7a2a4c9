"""Archive, restore and delete racing the corrections they could undo (a review helper's races,
session 40): each reads the memory inside its own write, so a retracted or corrected-away value
never comes back and a memory deleted meanwhile is a 404, not a 500. On both backends."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from tests.conftest import LiveServer
from tests.factories import fact_body, scope_fields

TRIALS = 12


Call = tuple[httpx.Client, str, str, dict[str, Any]]  # a client, a method, a path, the request's arguments


def _race(*calls: Call) -> list[httpx.Response]:
    """Send ``calls`` at once (released together), and return their answers in order."""
    start, answers = threading.Barrier(len(calls)), [None] * len(calls)

    def run(i: int) -> None:
        http, method, path, options = calls[i]
        start.wait()
        answers[i] = http.request(method, path, **options)  # type: ignore[call-overload]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers  # type: ignore[return-value]


def _clients(server: LiveServer, count: int) -> list[httpx.Client]:
    admin = server.key(role="admin")
    return [server.client(admin) for _ in range(count)]


def _city(
    http: httpx.Client, text: str, scope: dict[str, Any], subject: str = "user.city", **extra: Any
) -> httpx.Response:
    return http.post("/v1/facts", json=fact_body(text, subject=subject, kind="location", scope=scope, **extra))


def test_restore_refuses_a_value_retracted_since_it_was_archived(server: LiveServer) -> None:
    [http] = _clients(server, 1)
    scope = scope_fields()
    paris = _city(http, "Paris", scope).json()["id"]
    assert http.post(f"/v1/facts/{paris}/archive", json={"reason": "tidy", "scope": scope}).status_code == 200
    again = _city(http, "Paris", scope, sourceEventId="again").json()["id"]
    assert http.post(f"/v1/facts/{again}/retract", json={"reason": "wrong city", "scope": scope}).status_code == 200
    assert _city(http, "Paris", scope, sourceEventId="third").status_code == 409  # the tombstone refuses it
    restored = http.post(f"/v1/facts/{paris}/restore", json={"scope": scope})
    assert restored.status_code == 409 and "tombstoned" in restored.json()["message"]
    assert http.get("/v1/facts", params=scope).json()["facts"] == []
    # The control: an archived value nobody retracted comes back.
    berlin = http.post("/v1/facts", json=fact_body("Berlin", subject="user.office", kind="location", scope=scope))
    office = berlin.json()["id"]
    assert http.post(f"/v1/facts/{office}/archive", json={"reason": "tidy", "scope": scope}).status_code == 200
    assert http.post(f"/v1/facts/{office}/restore", json={"scope": scope}).status_code == 200
    http.close()


def test_archive_racing_a_retraction_or_a_correction_never_leaves_both_done(server: LiveServer) -> None:
    one, two, reader = _clients(server, 3)
    outcomes = set()
    for trial in range(TRIALS):
        scope = scope_fields(agentId=f"race-{trial}")
        fact = _city(reader, "Paris", scope).json()["id"]
        other = "retract" if trial % 2 else "correct"
        change = {"reason": "wrong city", "scope": scope} | ({"text": "Lyon"} if other == "correct" else {})
        archived, changed = _race(
            (one, "POST", f"/v1/facts/{fact}/archive", {"json": {"reason": "tidy", "scope": scope}}),
            (two, "POST", f"/v1/facts/{fact}/{other}", {"json": change}),
        )
        outcomes.add((archived.status_code, changed.status_code))
        assert not (archived.status_code == 200 and changed.is_success), (trial, other, archived.text, changed.text)
        assert archived.status_code in (200, 409) and changed.status_code in (200, 201, 404, 409)
        status = reader.get(f"/v1/facts/{fact}", params=scope).json()
        assert not (status["status"] == "archived" and status.get("supersededByFactId")), status
    assert any(a == 200 or c in (200, 201) for a, c in outcomes)  # the control: one of them did its work
    for http in (one, two, reader):
        http.close()


def test_archive_mark_and_restore_racing_a_delete_answer_404_not_500(server: LiveServer) -> None:
    one, two, reader = _clients(server, 3)
    scope = scope_fields()
    seen = []
    for trial in range(TRIALS):
        fact = _city(reader, f"City {trial}", scope, subject=f"user.place{trial}").json()["id"]
        action = ("archive", "mark", "restore")[trial % 3]
        if action == "restore":
            assert reader.post(f"/v1/facts/{fact}/archive", json={"reason": "tidy", "scope": scope}).is_success
        body = {"importance": 0.5, "scope": scope} if action == "mark" else {"reason": "r", "scope": scope}
        acted, deleted = _race(
            (one, "POST", f"/v1/facts/{fact}/{action}", {"json": body}),
            (two, "DELETE", f"/v1/facts/{fact}", {"params": scope}),
        )
        seen.append((action, acted.status_code, deleted.status_code))
        assert acted.status_code in (200, 404), (action, acted.text)
        assert deleted.status_code == 200, deleted.text  # the control: the delete always lands
    for http in (one, two, reader):
        http.close()


def test_a_fact_deleted_with_every_version_takes_a_correction_that_raced_it(server: LiveServer) -> None:
    one, two, reader = _clients(server, 3)
    for trial in range(TRIALS):
        scope = scope_fields(agentId=f"gone-{trial}")
        fact = _city(reader, "Paris", scope).json()["id"]
        deleted, corrected = _race(
            (one, "DELETE", f"/v1/facts/{fact}", {"params": scope}),
            (two, "POST", f"/v1/facts/{fact}/correct", {"json": {"text": "Lyon", "reason": "moved", "scope": scope}}),
        )
        assert deleted.status_code == 200, deleted.text
        if corrected.status_code == 201:  # the correction landed first: the delete took it as a version
            assert reader.get(f"/v1/facts/{corrected.json()['id']}", params=scope).status_code == 404
        assert reader.get("/v1/facts", params=scope).json()["facts"] == [], trial
    control = _city(reader, "Paris", scope_fields(agentId="kept")).json()["id"]  # a fact nobody deleted stays
    assert reader.get(f"/v1/facts/{control}", params=scope_fields(agentId="kept")).status_code == 200
    for http in (one, two, reader):
        http.close()
