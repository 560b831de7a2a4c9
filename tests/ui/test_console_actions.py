"""The operator's actions on the console: a person's marks and the archive, deleting a memory, finding
and forgetting a user. Each: the happy path, a role that is refused, and bad input shown as a message."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from engramdb_bench.console_seed import ALICE, NAMED, Seeded, seed
from tests.ui.conftest import Tab


def seeded(tab: Tab) -> Seeded:
    return seed(tab.server.url, lambda role, **grant: tab.server.key(role=role, **grant))


def _memory(tab: Tab, tenant: Seeded, kind: str, memory_id: str) -> dict[str, object] | None:
    """The memory as the API lists it (a fact's retired versions included), None when it is not there."""
    params: dict[str, Any] = {"participantScopeHash": tenant.ids["participant"], **NAMED, "limit": 1000}
    with tab.server.client(tenant.tokens["host"]) as http:  # a host key: it names the agent and profile the scope needs
        if kind == "facts":
            listed = http.get("/v1/facts", params={**params, "includeHistory": True}).json()["facts"]
        else:
            listed = http.get("/v1/episodes", params=params).json()["episodes"]
    return next((dict(m) for m in listed if m["id"] == memory_id), None)


def _status(tab: Tab, tenant: Seeded, fact_id: str) -> object:
    return (_memory(tab, tenant, "facts", fact_id) or {}).get("status")


def _crafted(tab: Tab, token: str, path: str, body: str) -> int:
    """The status of a form post sent from the page with ``token``, as a crafted request would be."""
    return int(
        tab.page.evaluate(
            """async ([url, key, body]) => (await fetch(url, {method: 'POST', headers: {
            Authorization: 'Bearer ' + key, 'content-type': 'application/x-www-form-urlencoded'}, body})).status""",
            [f"{tab.server.url}{path}", token, body],
        )
    )


def test_a_fact_is_archived_with_its_reason_restored_and_unpinned(tab: Tab) -> None:
    tenant = seeded(tab)
    scope, fact = tenant.ids["scope"], tenant.ids["fact"]
    tab.sign_in(tenant.tokens["admin"], f"/ui/facts/{fact}?scope={scope}")
    page = tab.page
    tab.allow(422)
    page.get_by_label("Reason").and_(page.locator("#archive-reason")).fill("   ")  # passes `required`, says nothing
    page.get_by_role("button", name="Archive", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("reason")
    assert _status(tab, tenant, fact) == "active"  # nothing changed
    page.locator("#archive-reason").fill("the user stopped using an editor")
    page.get_by_role("button", name="Archive", exact=True).click()
    expect(page.locator("p.done")).to_contain_text("Archived")
    assert _status(tab, tenant, fact) == "archived"
    with tab.server.client(tenant.tokens["admin"]) as http:
        entries = http.get("/v1/audit", params={"action": "memory.archive"}).json()["entries"]
    assert [e["reason"] for e in entries if e["targetId"] == fact] == ["the user stopped using an editor"]
    page.locator("#restore-reason").fill("archived by mistake")
    page.get_by_role("button", name="Restore", exact=True).click()
    expect(page.locator("p.done")).to_contain_text("Restored")  # not the archive's message, still shown
    assert _status(tab, tenant, fact) == "active"
    language = tenant.ids["language"]  # pinned by the seed
    assert (_memory(tab, tenant, "facts", language) or {}).get("pinned") is True
    tab.open(f"/ui/facts/{language}?scope={scope}")
    page.locator("#pin-reason").fill("no longer core")
    page.get_by_role("button", name="Unpin", exact=True).click()
    expect(page.get_by_role("button", name="Pin", exact=True)).to_be_visible()
    assert not (_memory(tab, tenant, "facts", language) or {"pinned": True}).get("pinned")


def test_an_episode_gets_an_importance_and_a_reviewer_may_mark_but_not_delete(tab: Tab) -> None:
    tenant = seeded(tab)
    scope, episode = tenant.ids["scope"], tenant.ids["episode"]
    path = f"/ui/episodes/{episode}?scope={scope}"
    tab.sign_in(tenant.tokens["admin"], path)
    expect(tab.page.get_by_role("button", name="Delete…")).to_be_visible()  # the positive control
    tab.page.get_by_role("button", name="Sign out").click()
    tab.sign_in(tenant.tokens["reviewer"], path)
    page = tab.page
    expect(page.locator("main")).to_contain_text("Use TypeScript for the billing service.")
    page.get_by_label("Importance (0 to 1)").fill("0.9")
    page.locator("#importance-reason").fill("the kickoff decided the stack")
    page.get_by_role("button", name="Set importance").click()
    expect(page.locator("p.done")).to_be_visible()
    assert (_memory(tab, tenant, "episodes", episode) or {})["importance"] == 0.9
    expect(page.get_by_role("button", name="Delete…")).to_have_count(0)  # a reviewer does not write
    tab.allow(403)
    status = _crafted(tab, tenant.tokens["reviewer"], f"/ui/part/memory/episodes/{episode}/delete", f"scope={scope}")
    assert status == 403
    assert _memory(tab, tenant, "episodes", episode) is not None


def test_deleting_a_memory_names_it_first_and_cancel_keeps_it(tab: Tab) -> None:
    tenant = seeded(tab)
    scope, episode = tenant.ids["scope"], tenant.ids["episode"]
    tab.sign_in(tenant.tokens["admin"], f"/ui/episodes/{episode}?scope={scope}")
    page = tab.page
    page.get_by_role("button", name="Delete…").click()
    expect(page.locator("#confirm ul.ids")).to_contain_text(episode)  # what will go, named
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator("#confirm section")).to_have_count(0)
    assert _memory(tab, tenant, "episodes", episode) is not None  # cancel kept it
    page.get_by_role("button", name="Delete…").click()
    page.get_by_role("button", name="Delete 1 row for good").click()
    expect(page.locator("h1")).to_have_text("Deleted")
    assert _memory(tab, tenant, "episodes", episode) is None


def test_a_user_is_found_by_their_id_and_forgotten_after_a_dry_run(tab: Tab) -> None:
    tenant = seeded(tab)
    tab.sign_in(tenant.tokens["admin"], "/ui/people")
    page = tab.page
    tab.allow(422)
    page.get_by_role("button", name="Find", exact=True).click()  # no user id typed
    expect(page.get_by_role("alert")).to_contain_text("userId")
    page.get_by_label("User id, as your application knows them").fill(ALICE)
    page.get_by_role("button", name="Find", exact=True).click()
    expect(page.locator("#participant-scopes tbody tr")).to_have_count(1)
    expect(page.locator("#participant")).to_contain_text(tenant.ids["participant"])
    assert ALICE not in page.url and tenant.ids["participant"] in page.url  # the address bar: the hash only
    page.get_by_role("button", name="Forget…").click()
    counts = page.locator("#forget-counts")
    expect(counts).to_contain_text("1 scope")
    expect(counts).to_contain_text("records")
    memories = int(counts.locator("li").nth(1).inner_text().split()[0])
    assert memories >= 10  # five episodes and the facts' versions
    page.get_by_role("button", name=f"Forget {memories} memories for good").click()
    expect(page.locator("p.done")).to_be_visible()
    with tab.server.client(tenant.tokens["admin"]) as http:
        left = {s["participantScopeHash"] for s in http.get("/v1/scopes").json()["scopes"]}
    assert tenant.ids["participant"] not in left and left  # Alice gone, Bob kept


def test_a_reviewer_finds_a_user_but_may_not_forget_them(tab: Tab) -> None:
    tenant = seeded(tab)
    tab.sign_in(tenant.tokens["reviewer"], "/ui/people")
    page = tab.page
    page.get_by_label("User id, as your application knows them").fill(ALICE)
    page.get_by_role("button", name="Find", exact=True).click()
    expect(page.locator("#participant-scopes tbody tr")).to_have_count(1)  # the positive control
    expect(page.get_by_role("button", name="Forget…")).to_have_count(0)
    tab.allow(403)
    body = f"participant={tenant.ids['participant']}&confirm=yes"
    assert _crafted(tab, tenant.tokens["reviewer"], "/ui/part/people/forget", body) == 403
    with tab.server.client(tenant.tokens["admin"]) as http:
        left = {s["participantScopeHash"] for s in http.get("/v1/scopes").json()["scopes"]}
    assert tenant.ids["participant"] in left
    page.get_by_role("button", name="Sign out").click()
    tab.sign_in(tenant.tokens["host"], "/ui/people")  # a host key may not open the page at all
    expect(page.locator("main").get_by_role("alert")).to_contain_text("host keys may not")
    expect(page.locator("#sections")).not_to_contain_text("People")
    expect(page.locator("#sections")).to_contain_text("Memories")
