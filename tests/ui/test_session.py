"""Signing in, where the key goes (and where it never goes), and what each key may see and do."""

from __future__ import annotations

import logging

import pytest
from playwright.sync_api import Request, expect

from tests.factories import episode_body, participant, scope_fields
from tests.ui.conftest import Tab
from tests.ui.seed import write

BOB = scope_fields(participantScopeHash=participant("bob"))


def test_a_wrong_key_is_refused_and_a_right_one_kept_in_this_tab(tab: Tab, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    token = tab.server.key(role="admin")
    secret = token.rsplit(".", 1)[1]
    sent: list[Request] = []
    tab.page.on("request", lambda r: sent.append(r))
    tab.allow(401)  # the refused key's check logs its 401, as browsers do
    tab.page.goto(f"{tab.server.url}/ui/memories")
    tab.page.wait_for_url(lambda url: "/ui/signin?next=" in url)  # no key yet: the page asks for one
    tab.page.get_by_label("API key").fill(token[:-2] + "xx")
    tab.page.get_by_label("API key").press("Enter")
    expect(tab.page.get_by_role("alert")).to_contain_text("This key was refused: unknown key")
    assert tab.page.evaluate("sessionStorage.length") == 0
    tab.page.get_by_label("API key").fill(token)
    tab.page.get_by_label("API key").press("Enter")
    tab.page.wait_for_url(lambda url: url.endswith("/ui/memories"))
    tab.loaded()
    expect(tab.page.locator("#who")).to_contain_text("admin key")
    assert tab.page.evaluate("sessionStorage.getItem('engram.key')") == token  # kept in this tab
    assert tab.page.evaluate("localStorage.length") == 0 and tab.page.context.cookies() == []
    parts = [r for r in sent if "/ui/part/" in r.url]
    assert parts and all(r.headers.get("authorization") == f"Bearer {token}" for r in parts[1:])  # as a header
    assert not [r.url for r in sent if secret in r.url] and secret not in tab.page.url  # never in a URL
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "/ui/part/memories" in logged and secret not in logged  # the log is read, and holds no key


def test_signing_out_forgets_the_key(tab: Tab) -> None:
    tab.sign_in(tab.server.key(role="reviewer"))
    tab.page.get_by_role("button", name="Sign out").click()
    tab.page.wait_for_url(lambda url: url.endswith("/ui/signin"))
    assert tab.page.evaluate("sessionStorage.length") == 0
    tab.page.goto(f"{tab.server.url}/ui/audit")
    tab.page.wait_for_url(lambda url: "/ui/signin?next=" in url)


def test_a_revoked_key_is_sent_back_to_sign_in(tab: Tab) -> None:
    admin, doomed = tab.server.key(role="admin"), tab.server.key(role="reviewer")
    tab.sign_in(doomed, "/ui/audit")
    # The page checks the chain on load: that answer must come in before the key goes (else it is the
    # request the server refuses, and the tab leaves before the filters are applied).
    expect(tab.page.locator("p.verdict").first).not_to_contain_text("Verifying")
    with tab.server.client(admin) as http:
        assert http.delete(f"/v1/keys/{doomed.split('.')[2]}").status_code == 204
    tab.allow(401)
    tab.page.get_by_role("button", name="Apply filters").click()
    tab.page.wait_for_url(lambda url: "/ui/signin?next=" in url)
    expect(tab.page.locator("#signin-why")).to_contain_text("The server refused this tab's key: this key was revoked")
    assert tab.page.evaluate("sessionStorage.length") == 0


def test_every_dashboard_answer_carries_a_strict_policy(tab: Tab) -> None:
    with tab.server.client(tab.server.key(role="admin")) as http:
        for path in ("/ui/signin", "/ui/memories", "/ui/assets/app.js", "/ui/part/admin"):
            policy = http.get(path).headers["content-security-policy"]
            assert "script-src 'self'" in policy and "default-src 'none'" in policy, path
            assert "unsafe" not in policy and "frame-ancestors 'none'" in policy, path
        assert "content-security-policy" not in http.get("/v1/facts", params=scope_fields()).headers  # API as before
        assert http.get("/ui/part/admin").headers["cache-control"] == "no-store"
        assert http.get("/", follow_redirects=False).headers["location"] == "/ui/memories"


def test_an_agent_key_sees_only_its_scope(tab: Tab) -> None:
    write(tab.server, tab.server.key())  # alice's scope, through her own agent key
    with tab.server.client(tab.server.key(role="agent", **BOB)) as http:
        assert http.post("/v1/episodes", json=episode_body("Bob keeps his notes in Obsidian.")).status_code == 201
    with tab.server.client(tab.server.key(role="reviewer")) as http:
        bobs = next(
            s
            for s in http.get("/v1/scopes").json()["scopes"]
            if s["participantScopeHash"] == BOB["participantScopeHash"]
        )["scopeKey"]
    tab.sign_in(tab.server.key())
    main = tab.page.locator("main")
    expect(main).to_contain_text("Deploy billing on Fridays.")  # the positive control: her own memories
    expect(main).not_to_contain_text("Obsidian")
    assert tab.page.locator("#scope option").count() == 1
    tab.allow(404)
    tab.open(f"/ui/memories?scope={bobs}")  # naming Bob's scope in the address bar
    expect(main.get_by_role("alert")).to_contain_text("no scope")
    expect(main).not_to_contain_text("Obsidian")
    tab.shot("agent-own-scope-only")


def test_a_reviewer_may_read_and_decide_but_not_write(tab: Tab) -> None:
    ids = write(tab.server, tab.server.key())
    admin, reviewer = tab.server.key(role="admin"), tab.server.key(role="reviewer")
    scope_key = _scope_key(tab, admin)
    timeline = f"/ui/facts/{ids['editor']}?scope={scope_key}"
    tab.sign_in(admin, timeline)
    expect(tab.page.get_by_role("button", name="Correct")).to_be_visible()  # the positive control
    tab.page.get_by_role("button", name="Sign out").click()
    tab.sign_in(reviewer, timeline)
    expect(tab.page.locator("#versions")).to_contain_text("The user edits in vim.")
    expect(tab.page.get_by_role("button", name="Correct")).to_have_count(0)
    expect(tab.page.get_by_role("button", name="Retract")).to_have_count(0)
    tab.allow(403)
    # Sent anyway, as a crafted request from the page with the reviewer's key: the server refuses it.
    status = tab.page.evaluate(
        """async ([url, key, scope]) => (await fetch(url, {method: 'POST', headers: {
        Authorization: 'Bearer ' + key, 'content-type': 'application/x-www-form-urlencoded'},
        body: 'text=The+user+edits+in+emacs.&reason=forged&scope=' + scope})).status""",
        [f"{tab.server.url}/ui/part/facts/{ids['editor']}/correct", reviewer, scope_key],
    )
    assert status == 403
    tab.open("/ui/admin")
    expect(tab.page.locator("main").get_by_role("alert")).to_contain_text("reviewer keys may not manage keys")
    with tab.server.client(admin) as http:
        facts = http.get("/v1/facts", params=scope_fields()).json()["facts"]
    assert [f["event"]["text"] for f in facts] == ["The user edits in vim."]  # nothing was written


def _scope_key(tab: Tab, token: str) -> str:
    with tab.server.client(token) as http:
        return str(http.get("/v1/scopes").json()["scopes"][0]["scopeKey"])
