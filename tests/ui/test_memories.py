"""Browsing, recalling with the score breakdown, a fact's timeline, and stored text shown as text."""

from __future__ import annotations

import time

import httpx
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.factories import episode_body, fact_body, scope_fields
from tests.ui.conftest import Tab
from tests.ui.seed import write

XSS = "<img src=x onerror=alert(1)>"


def _embedded(server: LiveServer, token: str) -> None:
    """Wait until every episode and current fact of the scope has its vector (the dense arm then ranks
    it, and the answer stops changing: a fact's vector arriving moves every score of the dense arm)."""
    deadline = time.monotonic() + 20
    with server.client(token) as http:
        while _states(http, "episodes") | _states(http, "facts") != {"ready"}:
            assert time.monotonic() < deadline, "memories were not embedded"
            time.sleep(0.05)


def _states(http: httpx.Client, kind: str) -> set[str]:
    memories = http.get(f"/v1/{kind}").json()[kind]
    assert memories, kind  # control: there is something to wait for
    return {m["embedding"]["state"] for m in memories}


def test_recall_shows_each_memory_with_its_score_breakdown_and_the_context(tab: Tab) -> None:
    agent = tab.server.key()
    write(tab.server, agent)
    _embedded(tab.server, agent)
    with tab.server.client(agent) as http:
        body = {"query": "TypeScript billing", "explain": True, "minScore": 0.3}  # the playground's floor
        expected = http.post("/v1/recall", json=body).json()
    assert expected["memories"]  # the floor leaves memories to compare
    tab.sign_in(agent, "/ui/recall")
    tab.page.get_by_label("Query").fill("TypeScript billing")
    tab.page.get_by_label("Query").press("Enter")
    hits = tab.page.locator("li.hit")
    expect(hits).to_have_count(len(expected["memories"]))
    for hit, memory in zip(hits.all(), expected["memories"], strict=True):  # the API's ranking, in order
        expect(hit.locator("p.text")).to_have_text(memory["text"])
    first, explain = hits.first, expected["memories"][0]["explain"]
    for arm in ("dense", "lexical"):  # both arms drew their part, as the API reports it
        segment = first.locator(f"svg.bar rect.seg-{arm}")
        assert float(segment.get_attribute("width") or 0) > 0, arm
        expect(segment.locator("title")).to_have_text(f"{arm} {explain['arms'][arm]['contribution']:+.3f}")
    label = first.locator("svg.bar").get_attribute("aria-label") or ""
    assert label.startswith(f"Score {expected['memories'][0]['score']:.3f}: dense")
    first.get_by_text("Score breakdown of memory 1").click()
    expect(first.locator("table.breakdown").first).to_contain_text(f"{explain['arms']['lexical']['raw']:.4f}")
    expect(tab.page.locator("pre.context")).to_have_text(expected["context"])  # the agent's exact block
    tab.shot("recall-breakdown")


def test_the_timeline_after_two_corrections(tab: Tab) -> None:
    agent, admin = tab.server.key(), tab.server.key(role="admin")
    first = write(tab.server, agent)["editor"]
    with tab.server.client(admin) as http:
        scope_key = http.get("/v1/scopes").json()["scopes"][0]["scopeKey"]
    tab.sign_in(agent, f"/ui/facts/{first}?scope={scope_key}")
    for text, reason in [("The user edits in helix.", "switched in May"), ("The user edits in Zed.", "switched again")]:
        tab.page.get_by_label("Corrected text").fill(text)
        tab.page.get_by_label("Reason").first.fill(reason)
        tab.page.get_by_role("button", name="Correct").click()
        expect(tab.page.locator("p.done")).to_contain_text(f"Corrected: now “{text}”")
    expect(tab.page.locator("main")).to_contain_text("Reviewer and admin keys see the audit entries")
    tab.page.get_by_role("button", name="Sign out").click()
    tab.sign_in(admin, f"/ui/facts/{first}?scope={scope_key}")
    rows = tab.page.locator("#versions tbody tr")
    expect(rows).to_have_count(3)
    texts = ["The user edits in vim.", "The user edits in helix.", "The user edits in Zed."]
    for row, text, status in zip(rows.all(), texts, ["superseded", "superseded", "active"], strict=True):
        expect(row).to_contain_text(text)
        expect(row.locator(".status")).to_have_text(status)
    expect(rows.nth(0)).to_contain_text("switched in May")  # why each version ended
    expect(rows.nth(1)).to_contain_text("switched again")
    expect(tab.page.locator("#tombstones li")).to_have_count(2)
    agent_id = agent.split(".")[2]
    doings = tab.page.locator("#doings tbody tr")
    expect(doings.filter(has_text="fact.supersede")).to_have_count(2)
    expect(doings.filter(has_text=agent_id).first).to_be_visible()  # who did it: the agent's key
    for axis in tab.page.locator("figure.timeline svg").all():  # a lane per version on both axes
        expect(axis.locator("rect.span")).to_have_count(3)
        expect(axis.locator("rect.span.open")).to_have_count(1)  # only the current version still holds
    expect(tab.page.locator("figure.timeline path.tombstone")).to_have_count(2)
    tab.shot("fact-timeline")


def test_stored_markup_is_shown_as_text_and_runs_nothing(tab: Tab) -> None:
    agent = tab.server.key()
    with tab.server.client(agent) as http:
        assert http.post("/v1/episodes", json=episode_body(XSS)).status_code == 201
        fact = http.post("/v1/facts", json=fact_body(XSS, kind="note")).json()
        parked = http.post("/v1/facts", params={"origin": "derived"}, json=fact_body(XSS, kind="bio", subject="x"))
        assert parked.json()["outcome"] == "parked"
    admin = tab.server.key(role="admin")
    with tab.server.client(admin) as http:
        scope_key = http.get("/v1/scopes").json()["scopes"][0]["scopeKey"]
    tab.sign_in(admin)
    for path in ("/ui/memories", f"/ui/facts/{fact['id']}?scope={scope_key}", "/ui/review"):
        tab.open(path)
        expect(tab.page.locator("main").get_by_text(XSS, exact=True).first).to_be_visible()  # the text itself
        assert tab.page.locator("main img").count() == 0, path
    tab.open("/ui/recall")
    tab.page.get_by_label("Query").fill("img src onerror alert")
    tab.page.get_by_role("button", name="Recall").click()
    expect(tab.page.locator("li.hit").first).to_contain_text(XSS)
    expect(tab.page.locator("pre.context")).to_contain_text(XSS)
    assert tab.page.locator("main img").count() == 0
    assert tab.heard.dialogs == [] and tab.page.evaluate("typeof window.__pwned") == "undefined"
    assert tab.heard.unexpected == [] and tab.heard.csp == []  # the pages themselves broke nothing
    # Even markup that did get in would run nothing: the policy forbids inline handlers.
    tab.page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=x onerror=\"window.__pwned=1\">')")
    tab.page.wait_for_timeout(300)
    assert tab.page.evaluate("typeof window.__pwned") == "undefined"
    assert tab.heard.csp, "the page reported no violation"  # heard through the binding, then let go
    tab.heard.csp.clear()
    tab.heard.console_errors.clear()  # the injected image's failed load and its refused handler: the test's own
    # The positive control: the same markup on a page with no policy does run.
    tab.page.goto("about:blank")
    tab.page.set_content("<body></body>")
    tab.page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=x onerror=\"window.__pwned=1\">')")
    tab.page.wait_for_function("window.__pwned === 1")
    assert tab.heard.csp == []  # the control page broke no policy: it had none
    tab.heard.console_errors.clear()  # its image's failed load is the test's own


def test_a_window_of_a_thousand_memories_lists_them_all(tab: Tab) -> None:
    agent = tab.server.key()
    with tab.server.client(agent) as http:
        for batch in range(10):
            episodes = [
                episode_body(f"Turn {batch * 100 + i} of a long session.", turn=batch * 100 + i) for i in range(100)
            ]
            assert http.post("/v1/episodes/batch", json={"episodes": episodes}).status_code == 200
    tab.sign_in(agent, "/ui/memories?show=episodes&limit=1000")
    rows = tab.page.locator("#episodes tbody tr:not(.window-edge)")
    expect(rows).to_have_count(1000)
    expect(rows.first).to_contain_text("Turn 999 of a long session.")
    expect(tab.page.locator("#episodes-end")).to_contain_text("1,000 episodes shown")  # one window held them all
    tab.page.get_by_label("Rows at a time").select_option("50")
    tab.page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(50)
    expect(tab.page.locator("#episodes-more")).to_contain_text("50 of 1,000 shown")
    assert "limit=50" in tab.page.url  # the address shows the filters
    assert scope_fields()["agentId"] == "coder"
