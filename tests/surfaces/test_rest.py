"""The REST surface through a real uvicorn server and httpx."""

from __future__ import annotations

import json

from engramdb.contract.canonical import event_id
from tests.cli import engram
from tests.conftest import LiveServer
from tests.contract._helpers import CONTRACT_DIR
from tests.factories import episode_body, fact_body, scope_fields

FIXTURE = json.loads((CONTRACT_DIR / "conformance.v1.json").read_text())


def test_episode_write_is_idempotent_and_id_is_computed(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        first = http.post("/v1/episodes", json=episode_body())
        again = http.post("/v1/episodes", json=episode_body())
    assert first.status_code == 201, first.text
    assert again.status_code == 200
    body = first.json()
    assert body["created"] is True and again.json()["created"] is False
    assert (
        body["id"]
        == again.json()["id"]
        == event_id(
            runtime="custom",
            agent_id="coder",
            profile_id="default",
            external_session_id="session-1",
            turn_index=0,
            user_text="I prefer TypeScript for this service.",
            assistant_text="I will use TypeScript.",
        )
    )
    assert body["memory"]["event"]["eventId"] == body["id"]


def test_fixture_event_gets_the_reference_id_through_the_server(server: LiveServer) -> None:
    inp = FIXTURE["episodeInput"]
    grant = {k: inp[k] for k in scope_fields()}
    with server.client(server.key(**grant)) as http:
        response = http.post("/v1/episodes", json={**inp, "eventId": FIXTURE["expectedEventId"]})
        wrong = http.post("/v1/episodes", json={**inp, "eventId": "0" * 64})
    assert response.status_code == 201, response.text
    assert response.json()["id"] == FIXTURE["expectedEventId"]
    assert wrong.status_code == 422
    assert wrong.json()["field"] == "eventId"
    assert wrong.json()["expected"] == FIXTURE["expectedEventId"]


def test_bad_input_names_the_field_and_writes_nothing(server: LiveServer) -> None:
    token = server.key()
    cases = {
        "turnIndex": episode_body(turnIndex=-1),
        "trustClass": episode_body(trustClass="very"),
        "surprise": episode_body(surprise=1),
        "userText": episode_body(user="x" * 16_001),
        "observedAt": episode_body(observedAt="yesterday"),
        "summary": episode_body(summary="", user="x"),
    }
    with server.client(token) as http:
        for field, body in cases.items():
            response = http.post("/v1/episodes", json=body)
            assert response.status_code == 422, (field, response.text)
            assert response.json()["field"] == field, response.json()
        malformed = http.post("/v1/episodes", content=b"{not json", headers={"content-type": "application/json"})
        assert malformed.status_code == 422
        # Nothing was half-written: a recall over every word finds nothing, while a good write
        # right after is found (positive control).
        empty = http.post("/v1/recall", json={"query": "TypeScript service prefer"}).json()
        assert empty["memories"] == []
        assert http.post("/v1/episodes", json=episode_body()).status_code == 201
        found = http.post("/v1/recall", json={"query": "TypeScript service prefer"}).json()
        assert len(found["memories"]) == 1


def test_over_long_query_and_limit_bounds(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        assert http.post("/v1/recall", json={"query": "x" * 4_001}).json()["field"] == "query"
        assert http.post("/v1/recall", json={"query": "x", "limit": 51}).json()["field"] == "limit"
        assert http.post("/v1/recall", json={"query": "x", "limit": 0}).status_code == 422
        assert http.post("/v1/recall", json={"query": "x", "limit": 50}).status_code == 200


def test_authentication(server: LiveServer) -> None:
    token = server.key()
    with server.client(None) as anonymous:
        assert anonymous.post("/v1/recall", json={"query": "x"}).status_code == 401
    with server.client(token[:-2] + "zz") as forged:
        assert forged.post("/v1/recall", json={"query": "x"}).status_code == 401
    with server.client("egm.nosuchtenant.abc.def") as unknown:
        assert unknown.post("/v1/recall", json={"query": "x"}).status_code == 401
    with server.client(token) as http:
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
    key_id = token.split(".")[2]
    admin = server.key(role="admin")
    with server.client(admin) as http:
        assert http.delete(f"/v1/keys/{key_id}").status_code == 204
        assert http.delete(f"/v1/keys/{key_id}").status_code == 404
    with server.client(token) as http:
        revoked = http.post("/v1/recall", json={"query": "x"})
        assert revoked.status_code == 401 and "revoked" in revoked.json()["message"]


def test_get_by_id_reports_embedding_state_and_scope(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        written = http.post("/v1/facts", json=fact_body()).json()
        fact = http.get(f"/v1/facts/{written['id']}")
        assert fact.status_code == 200
        assert fact.json()["embedding"]["state"] in ("pending", "ready")
        assert fact.json()["status"] == "active"
        assert http.get(f"/v1/facts/{'0' * 64}").status_code == 404
        assert http.get(f"/v1/episodes/{written['id']}").status_code == 404  # a fact, not an episode


def test_fact_listing_filters_by_subject_and_kind(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        http.post("/v1/facts", json=fact_body("Likes tea", subject="user", kind="likes"))
        http.post("/v1/facts", json=fact_body("Lives in Lisbon", subject="user", kind="home"))
        http.post("/v1/facts", json=fact_body("Repo uses Rust", subject="repo", kind="home"))
        by_subject = http.get("/v1/facts", params={"subjectKey": "user"}).json()["facts"]
        by_both = http.get("/v1/facts", params={"subjectKey": "user", "kind": "home"}).json()
    assert sorted(f["event"]["text"] for f in by_subject) == ["Likes tea", "Lives in Lisbon"]
    assert [f["event"]["text"] for f in by_both["facts"]] == ["Lives in Lisbon"]


def test_recall_ranks_sessions_beyond_the_memories_it_returns(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        for session, texts in {
            "trip": ["We booked the Lisbon flight and the Lisbon hotel", "The Lisbon hotel has a pool"],
            "work": ["The Lisbon office opens in March", "Budget review on Monday"],
            "food": ["Ramen for dinner", "Pizza tomorrow"],
        }.items():
            for turn, text in enumerate(texts):
                http.post("/v1/episodes", json=episode_body(text, "", session=session, turn=turn))
        asked = {"query": "Lisbon hotel flight", "limit": 1, "sessions": 3}
        answer = http.post("/v1/recall", json=asked).json()
        plain = http.post("/v1/recall", json={**asked, "sessions": 0}).json()
        refused = http.post("/v1/recall", json={**asked, "sessions": 51})
    assert len(answer["memories"]) == 1 and answer["memories"][0]["sessionId"] == "trip"
    ranked = [s["sessionId"] for s in answer["sessions"]]
    assert ranked[:2] == ["trip", "work"]  # "work" is ranked though no memory of it was returned
    assert answer["sessions"][0]["memoryIds"][0] == answer["memories"][0]["id"]
    assert plain.get("sessions") is None and len(plain["memories"]) == 1
    assert refused.status_code == 422 and "sessions" in refused.text


def test_recall_answers_memories_and_context_with_explain(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        http.post("/v1/facts", json=fact_body("The user drinks green tea every morning"))
        http.post("/v1/episodes", json=episode_body("We deployed the billing service", "Done."))
        response = http.post("/v1/recall", json={"query": "what tea does the user drink", "explain": True}).json()
    top = response["memories"][0]
    assert top["text"] == "The user drinks green tea every morning"
    assert top["source"] == "MEMORY_FACT" and top["trustClass"] == "trusted"
    assert top["status"] == "active"
    assert set(top["explain"]["arms"]) >= {"lexical"}
    assert set(top["explain"]["features"]) == {"recency", "confidence", "importance", "trust", "neighbours"}
    parts = sum(a["contribution"] for a in top["explain"]["arms"].values())
    assert abs(parts + sum(top["explain"]["features"].values()) - top["score"]) < 1e-9
    assert response["context"].startswith("Historical memory follows.")
    assert '"The user drinks green tea every morning"' in response["context"]
    assert "trust=trusted; origin=stated; status=active]" in response["context"]


def test_keys_over_rest_are_admin_only(server: LiveServer) -> None:
    with server.client(server.key()) as agent:
        assert agent.post("/v1/keys", json={"role": "reviewer"}).status_code == 403
        assert agent.get("/v1/keys").status_code == 403
    with server.client(server.key(role="admin")) as admin:
        created = admin.post("/v1/keys", json={"role": "host", "grant": {"agentId": "a", "profileId": "p"}})
        assert created.status_code == 201, created.text
        assert created.json()["key"].startswith("egm.t1.")
        bad = admin.post("/v1/keys", json={"role": "host", "grant": {"agentId": "a"}})
        assert bad.status_code == 422 and bad.json()["field"] == "profileId"
        listed = admin.get("/v1/keys").json()["keys"]
        assert created.json()["keyId"] in {k["keyId"] for k in listed}
        assert all("key" not in k and "secretHash" not in k for k in listed)


def test_health_and_openapi(server: LiveServer) -> None:
    with server.client(None) as http:
        assert http.get("/healthz").json()["status"] == "ok"
        paths = http.get("/openapi.json").json()["paths"]
    for path in (
        "/v1/episodes",
        "/v1/facts",
        "/v1/recall",
        "/v1/facts/{fact_id}",
        "/v1/episodes/{event_id}",
        "/v1/keys",
    ):
        assert path in paths


def test_a_small_scope_finds_a_new_memory_by_any_of_its_words(server: LiveServer) -> None:
    """Regression: in a one-memory scope every word is 'common'; none may be dropped."""
    with server.client(server.key()) as http:
        http.post("/v1/episodes", json=episode_body("Use TypeScript for the billing service.", "Will do."))
        # Asked at once (vector pending): the lexical arm alone must find it, though "language"
        # is not in the scope and "billing" is in all of it.
        found = http.post("/v1/recall", json={"query": "which language for billing?", "explain": True}).json()
    assert [m["text"].split("\n")[0] for m in found["memories"]] == ["Use TypeScript for the billing service."]
    assert "lexical" in found["memories"][0]["explain"]["arms"]


def test_recall_sources_filter_and_an_empty_list_is_refused(server: LiveServer) -> None:
    with server.client(server.key()) as http:
        http.post("/v1/facts", json=fact_body("The user drinks green tea"))
        http.post("/v1/episodes", json=episode_body("We talked about green tea", "Noted."))

        def sources(body: dict[str, object]) -> list[str]:
            answer = http.post("/v1/recall", json={"query": "green tea", **body})
            assert answer.status_code == 200, answer.text
            return sorted(m["source"] for m in answer.json()["memories"])

        assert sources({}) == ["EPISODE", "MEMORY_FACT"]
        assert sources({"sources": ["MEMORY_FACT"]}) == ["MEMORY_FACT"]
        assert sources({"sources": ["EPISODE"]}) == ["EPISODE"]
        empty = http.post("/v1/recall", json={"query": "green tea", "sources": []})
    assert empty.status_code == 422 and empty.json()["field"] == "sources", empty.text


def test_the_last_active_admin_key_cannot_be_revoked_over_rest(server: LiveServer) -> None:
    first = server.key(role="admin")
    first_id = first.split(".")[2]
    with server.client(first) as admin:
        alone = admin.delete(f"/v1/keys/{first_id}")
        assert alone.status_code == 409 and alone.json()["field"] == "keyId", alone.text
        assert "last active admin key" in alone.json()["message"]
        assert admin.get("/v1/keys").status_code == 200  # still works
        reviewer = admin.post("/v1/keys", json={"role": "reviewer"}).json()
        assert admin.delete(f"/v1/keys/{reviewer['keyId']}").status_code == 204  # other keys: as before
        second = admin.post("/v1/keys", json={"role": "admin"}).json()
        assert admin.delete(f"/v1/keys/{first_id}").status_code == 204  # another admin remains
    with server.client(second["key"]) as admin:
        assert admin.delete(f"/v1/keys/{second['keyId']}").status_code == 409  # now it is the last
        assert admin.get("/v1/keys").status_code == 200
    # The operator, on the data folder, may (and can always create another admin key).
    revoked = engram("keys", "revoke", second["keyId"], "--tenant", "t1", env=server.cli_env())
    assert revoked.returncode == 0, revoked.stderr


def test_a_date_time_past_year_9999_in_utc_is_refused_naming_the_field(server: LiveServer) -> None:
    """The contract admits 9999-12-31T23:59:59-01:00; the server keeps UTC, where it is year 10000."""
    beyond = "9999-12-31T23:59:59-01:00"
    with server.client(server.key()) as http:
        edge = http.post("/v1/facts", json=fact_body("Edge of time", kind="edge", validFrom="9999-12-31T23:59:59Z"))
        assert edge.status_code == 201, edge.text  # positive control: the last second in UTC is kept
        for field, body in (
            ("validFrom", fact_body("Past time", kind="far", validFrom=beyond)),
            ("validUntil", fact_body("Until never", kind="far", validUntil=beyond)),
        ):
            refused = http.post("/v1/facts", json=body)
            assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
        episode = http.post("/v1/episodes", json=episode_body("far future", "ok", observedAt=beyond))
        assert episode.status_code == 422 and episode.json()["field"] == "observedAt", episode.text
        for name in ("asOf", "validAt"):
            listed = http.get("/v1/facts", params={name: beyond})
            assert listed.status_code == 422 and listed.json()["field"] == name, listed.text
            recalled = http.post("/v1/recall", json={"query": "time", name: beyond})
            assert recalled.status_code == 422 and recalled.json()["field"] == name, recalled.text
        correct = http.post(
            f"/v1/facts/{edge.json()['id']}/correct", json={"text": "Later edge", "reason": "r", "validFrom": beyond}
        )
        assert correct.status_code == 422 and correct.json()["field"] == "validFrom", correct.text
        assert [f["event"]["text"] for f in http.get("/v1/facts", params={"kind": "far"}).json()["facts"]] == []
