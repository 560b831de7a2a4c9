"""The review queue (a fact written through MCP, approved, then recalled; a rejection with its
reason) and the audit log's verification before and after a row is tampered with."""

from __future__ import annotations

import threading

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.factories import fact_body, scope_fields
from tests.surfaces.test_audit_cli import _edit
from tests.ui.conftest import Tab
from tests.ui.seed import write


def _remember_over_mcp(server: LiveServer, key: str, text: str) -> str:
    """Call the MCP tool remember_fact as a model would; return the tool's answer."""
    said: list[str] = []

    async def main() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
                result = await client.call_tool("remember_fact", {"subject": "user", "kind": "editor", "text": text})
                said.append(" ".join(getattr(c, "text", "") for c in result.content))

    # In a thread of its own: the browser driver keeps an event loop on this one.
    worker = threading.Thread(target=anyio.run, args=(main,))
    worker.start()
    worker.join(60)
    assert said, "the MCP call did not answer"
    return said[0]


def _recall(tab: Tab, query: str) -> None:
    tab.open("/ui/recall")
    tab.page.get_by_label("Query").fill(query)
    tab.page.get_by_role("button", name="Recall").click()
    expect(tab.page.locator("pre.context")).to_be_visible()


def test_a_fact_written_through_mcp_is_approved_then_recalled(tab: Tab) -> None:
    agent, reviewer = tab.server.key(), tab.server.key(role="reviewer")
    answer = _remember_over_mcp(tab.server, agent, "The user uses neovim.")
    assert "pending_review" in answer
    tab.sign_in(reviewer)
    _recall(tab, "which editor does the user use")
    expect(tab.page.locator("#recalled")).not_to_contain_text("The user uses neovim.")  # not before approval
    tab.open("/ui/review")
    expect(tab.page.locator("#pending-count")).to_have_text("1")
    item = tab.page.locator("li.item").filter(has_text="The user uses neovim.")
    expect(item).to_contain_text("origin derived")
    expect(item).to_contain_text("mcp:http")
    tab.shot("review-queue")
    item.get_by_role("button", name="Approve", exact=True).click()
    expect(tab.page.locator("p.done")).to_contain_text("Approved “The user uses neovim.”")
    expect(tab.page.locator("main")).to_contain_text("Nothing awaits review.")
    expect(tab.page.locator("#pending-count")).to_have_text("")  # the header's count went with it
    _recall(tab, "which editor does the user use")
    expect(tab.page.locator("li.hit").filter(has_text="The user uses neovim.")).to_have_count(1)  # and after
    with tab.server.client(agent) as http:
        facts = http.get("/v1/facts", params={"kind": "editor"}).json()["facts"]
    assert [(f["event"]["text"], f["status"]) for f in facts] == [("The user uses neovim.", "active")]


def test_a_rejection_needs_a_reason_and_keeps_it(tab: Tab) -> None:
    agent, reviewer = tab.server.key(), tab.server.key(role="reviewer")
    with tab.server.client(agent) as http:
        parked = [
            http.post(
                "/v1/facts", params={"origin": "derived"}, json=fact_body(text, kind=kind, sourceEventId=kind)
            ).json()["id"]
            for text, kind in [
                ("The user lives in Atlantis.", "home"),
                ("The user is 300 years old.", "age"),
                ("The user likes sardines.", "likes"),
            ]
        ]
    tab.sign_in(reviewer, "/ui/review")
    item = tab.page.locator("li.item").filter(has_text="Atlantis")
    item.get_by_role("button", name="Reject", exact=True).click()  # no reason: the browser asks for one first
    assert item.get_by_label("Reason").evaluate("e => e.validity.valueMissing")
    expect(tab.page.locator("li.item")).to_have_count(3)
    tab.page.locator("li.item").filter(has_text="300 years").get_by_label("Select").check()
    tab.page.locator("li.item").filter(has_text="sardines").get_by_label("Select").check()
    tab.allow(422)  # the bulk rejection without a reason
    tab.page.get_by_role("button", name="Reject selected").click()  # several at once, still with no reason
    expect(tab.page.get_by_role("alert")).to_contain_text("a reason is required")
    expect(tab.page.locator("li.item")).to_have_count(3)  # nothing was decided
    item.get_by_label("Reason").fill("the user never said so")
    item.get_by_label("Reason").press("Enter")
    expect(tab.page.locator("p.done")).to_contain_text("Rejected “The user lives in Atlantis.”")
    tab.page.locator("li.item").filter(has_text="300 years").get_by_label("Select").check()
    tab.page.locator("li.item").filter(has_text="sardines").get_by_label("Select").check()
    tab.page.locator("#bulk-reason").fill("made up by the model")
    tab.page.get_by_role("button", name="Reject selected").click()
    expect(tab.page.locator("main")).to_contain_text("Nothing awaits review.")
    with tab.server.client(reviewer) as http:
        entries = http.get("/v1/audit", params={"action": "review.reject", "limit": 10}).json()["entries"]
        tombs = http.get("/v1/tombstones", params={**scope_fields(), "kind": "home"}).json()["tombstones"]
    assert [(e["targetId"], e["reason"]) for e in entries] == [
        (parked[0], "the user never said so"),
        (parked[1], "made up by the model"),
        (parked[2], "made up by the model"),
    ]
    assert [t["reason"] for t in tombs] == ["the user never said so"]


def test_the_audit_chain_is_verified_then_shown_broken_after_tampering(tab: Tab) -> None:
    write(tab.server, tab.server.key())
    tab.sign_in(tab.server.key(role="reviewer"), "/ui/audit")
    verdict = tab.page.locator("#verdict")
    expect(verdict).to_contain_text("Audit chain verified")
    expect(tab.page.locator("#audit tbody tr").first).to_contain_text("key.create")
    tab.shot("audit-verified")
    _edit(tab.server.store, "UPDATE audit_log SET reason = 'nothing happened' WHERE seq = 5")
    tab.open("/ui/audit")
    expect(verdict).to_contain_text("Audit chain broken at entry 5")
    expect(verdict).to_contain_text("content does not match its hash (edited)")
    expect(verdict).to_have_attribute("role", "alert")
    tab.page.get_by_role("link", name="Show entry 5").click()
    expect(tab.page.locator("#audit tbody tr").first).to_contain_text("nothing happened")  # the edited row
    tab.shot("audit-broken")
