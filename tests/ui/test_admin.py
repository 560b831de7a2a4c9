"""Admin: a key created with a scope grant (its token shown once), revoked; the policy edited,
with the server's validation shown."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.factories import participant
from tests.ui.conftest import Tab


def test_a_key_is_created_with_a_grant_shown_once_and_revoked(tab: Tab) -> None:
    tab.sign_in(tab.server.key(role="admin"), "/ui/admin")
    page = tab.page
    page.get_by_label("Role").select_option("agent")
    page.get_by_label("Label").fill("support bot")
    page.get_by_label("agentId").fill("support")
    page.get_by_label("profileId").fill("default")
    page.get_by_label("privacyScope").select_option("private")
    page.get_by_label("participantScopeHash").fill(participant("carol"))
    page.get_by_label("sandboxEligible").select_option("false")
    page.get_by_role("button", name="Create key").click()
    expect(page.locator(".created")).to_contain_text("copy it now, it is not shown again")
    token = page.locator("#new-key").input_value()
    with tab.server.client(token) as http:  # the token works, bound to the grant it was given
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 200
        assert http.post("/v1/recall", json={"query": "x", "scope": {"agentId": "coder"}}).status_code == 403
    key_id = token.split(".")[2]
    row = page.locator("#keys tbody tr").filter(has_text=key_id)
    expect(row).to_contain_text("agentId=support")
    expect(row).to_contain_text("support bot")
    tab.open("/ui/admin")
    expect(page.locator(".created")).to_have_count(0)  # shown once: not on the next visit
    assert token.rsplit(".", 1)[1] not in page.content()
    page.get_by_role("button", name=f"Revoke key {key_id}").click()  # the first click only asks
    expect(page.locator(".confirm")).to_contain_text("stops working at once")
    with tab.server.client(token) as http:
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 200  # not revoked yet
    page.locator(".confirm").get_by_role("button", name=f"Revoke key {key_id}").click()
    expect(page.locator("p.done")).to_contain_text(f"Revoked key {key_id}.")
    with tab.server.client(token) as http:
        assert http.post("/v1/recall", json={"query": "x"}).status_code == 401


def test_the_policy_is_edited_and_an_invalid_one_refused(tab: Tab) -> None:
    admin = tab.server.key(role="admin")
    tab.sign_in(admin, "/ui/admin")
    page = tab.page
    tab.allow(422)  # the invalid policy's refusal
    page.get_by_label("trusted derived weight", exact=True).fill("2")
    page.get_by_role("button", name="Save policy").click()
    expect(page.get_by_role("alert")).to_contain_text("trust.trusted.derived.weight")
    page.get_by_label("trusted derived weight", exact=True).fill("0.9")
    page.get_by_label("trusted derived status", exact=True).select_option("active")
    page.get_by_label("Kinds that hold several values").fill("likes, note, tool")
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("p.done")).to_contain_text("Policy saved.")
    with tab.server.client(admin) as http:
        policy = http.get("/v1/policy").json()
    assert policy["trust"]["trusted"]["derived"] == {"status": "active", "weight": 0.9}
    assert policy["multiValuedKinds"] == ["likes", "note", "tool"]
    assert policy["trust"]["mixed"]["stated"] == {"status": "active", "weight": 0.7}  # the rest as it was
