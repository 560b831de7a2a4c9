"""The console's reading pages: records and a record, the graph, usage and jobs. Each: what it shows,
a role or a key that is refused, and bad input shown as a message."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Locator, expect

from tests.ui.conftest import Tab
from tests.ui.test_console_actions import seeded


def test_records_are_searched_with_the_where_language_and_a_record_opens(tab: Tab) -> None:
    tenant = seeded(tab)
    scope = tenant.ids["scope"]
    tab.sign_in(tenant.tokens["admin"], f"/ui/records?scope={scope}")
    page = tab.page
    expect(page.locator("#schema")).to_contain_text("TASK")
    expect(page.locator("#records tbody tr")).to_have_count(7)  # a session, 2 decisions, 2 tasks, 2 entities
    tab.allow(422)
    page.get_by_label("Where (JSON", exact=False).fill('{"status": "open"')
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("alert")).to_contain_text("where")
    page.get_by_label("Labels", exact=True).fill("TASK")
    page.get_by_label("Where (JSON", exact=False).fill('{"status": "open"}')
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#records tbody tr")).to_have_count(1)
    page.get_by_role("link", name="Write the invoice migration").click()
    expect(page.locator("#properties")).to_contain_text("Alice")
    expect(page.locator("#relationships")).to_contain_text("Billing kickoff")
    expect(page.locator("#history li")).to_have_count(1)


def _view(graph: Locator) -> list[float]:
    return [float(v) for v in (graph.get_attribute("data-view") or "").split()]


def _centre(view: list[float]) -> list[float]:
    return [view[0] + view[2] / 2, view[1] + view[3] / 2]


def test_the_graph_draws_the_scope_and_a_node_opens_its_page(tab: Tab) -> None:
    tenant = seeded(tab)
    scope, record = tenant.ids["scope"], tenant.ids["record"]
    tab.sign_in(tenant.tokens["admin"], f"/ui/graph?scope={scope}&focus={record}")
    page = tab.page
    expect(page.locator("#graph-summary")).to_contain_text("7 records and 1 memories")
    graph = page.locator("#graph")
    expect(graph).to_have_attribute("data-drawn", "8")  # every node drawn on the canvas
    data = json.loads(graph.get_attribute("data-graph") or "{}")
    focused = next(n for n in data["nodes"] if n[5] == record)
    assert data["labels"][focused[3]] == "SESSION" and focused[2] >= 4  # a session, a hub
    assert _centre(_view(graph)) == pytest.approx(focused[:2], abs=1)  # the view centred on the record asked for
    before = graph.get_attribute("data-view")
    page.get_by_role("button", name="Zoom in").click()
    expect(graph).not_to_have_attribute("data-view", before or "")
    assert _view(graph)[2] < float((before or "0 0 0").split()[2])  # narrower: zoomed in
    page.get_by_role("button", name="Fit").click()
    page.get_by_text("The 8 nodes as a table").click()
    expect(page.locator("#graph-nodes tbody tr")).to_have_count(8)  # the table, filled when opened
    expect(page.locator("#graph-nodes")).to_contain_text("Billing kickoff")
    episode = next(n for n in data["nodes"] if data["labels"][n[3]] == "EPISODE")
    view, frame = _view(graph), graph.bounding_box()
    assert frame is not None
    x = frame["x"] + (episode[0] - view[0]) * frame["width"] / view[2]
    y = frame["y"] + (episode[1] - view[1]) * frame["height"] / view[3]
    page.mouse.click(x + 30, y + 30)  # beside the node: nothing opens (the click below does)
    expect(graph).to_be_visible()
    page.mouse.click(x, y)  # on the node
    expect(page.locator("h1")).to_contain_text("Episode billing-kickoff / 0")
    tab.allow(422)
    tab.open(f"/ui/graph?scope={scope}&memories=perhaps")
    expect(page.locator("main").get_by_role("alert")).to_contain_text("memories")


def test_another_scopes_key_sees_neither_its_records_nor_its_graph(tab: Tab) -> None:
    tenant = seeded(tab)
    scope = tenant.ids["scope"]
    agent = tab.server.key()  # an agent of another user's scope
    tab.sign_in(agent, "/ui/records")
    expect(tab.page.locator("main")).to_contain_text("No record matches.")  # its own scope: empty, but shown
    tab.allow(404)
    for page_name in ("records", "graph"):
        tab.open(f"/ui/{page_name}?scope={scope}")
        expect(tab.page.locator("main").get_by_role("alert")).to_contain_text("no scope")
        expect(tab.page.locator("main")).not_to_contain_text("Billing kickoff")


def test_usage_charts_and_the_ranges_a_form_may_name(tab: Tab) -> None:
    tenant = seeded(tab)
    tab.sign_in(tenant.tokens["admin"], "/ui/usage")
    page = tab.page
    expect(page.locator("figure.chart")).not_to_have_count(0)
    expect(page.locator("figure.chart svg").first).to_be_visible()  # something was drawn
    page.get_by_label("Range").select_option("30")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_label("Range")).to_have_value("30")
    tab.allow(422)
    tab.open("/ui/usage?days=5")
    expect(page.locator("main").get_by_role("alert")).to_contain_text("days")
    tab.page.get_by_role("button", name="Sign out").click()
    tab.allow(403)
    tab.sign_in(tenant.tokens["host"], "/ui/usage")
    expect(page.locator("main").get_by_role("alert")).to_contain_text("host keys may not read the audit log")
    expect(page.locator("#sections")).not_to_contain_text("Usage")


def test_jobs_are_listed_and_the_aging_sweep_runs_after_a_confirmation(tab: Tab) -> None:
    tenant = seeded(tab)
    tab.sign_in(tenant.tokens["admin"], "/ui/jobs")
    page = tab.page
    page.get_by_role("button", name="Run the aging sweep now…").click()
    expect(page.locator("#confirm")).to_contain_text("Run the aging sweep now?")
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator("#confirm section")).to_have_count(0)
    page.get_by_role("button", name="Run the aging sweep now…").click()
    page.get_by_role("button", name="Run the aging sweep", exact=True).click()
    expect(page.locator("p.done")).to_contain_text("Aging sweep done:")
    tab.allow(422)
    tab.open("/ui/jobs?state=stuck")
    expect(page.locator("main").get_by_role("alert")).to_contain_text("state")
    page.get_by_role("button", name="Sign out").click()
    tab.sign_in(tenant.tokens["reviewer"], "/ui/jobs")  # a reviewer reads the jobs but runs none
    expect(page.locator("#model-jobs-heading")).to_be_visible()
    expect(page.get_by_role("button", name="Run the aging sweep now…")).to_have_count(0)
    page.get_by_role("button", name="Sign out").click()
    tab.allow(403)
    tab.sign_in(tenant.tokens["host"], "/ui/jobs")
    expect(page.locator("main").get_by_role("alert")).to_contain_text("host keys may not read the background jobs")
