"""The console's reading pages: records and a record, the graph, usage and jobs. Each: what it shows,
a role or a key that is refused, and bad input shown as a message."""

from __future__ import annotations

from playwright.sync_api import expect

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


def test_the_graph_draws_the_scope_and_a_node_opens_its_page(tab: Tab) -> None:
    tenant = seeded(tab)
    scope, record = tenant.ids["scope"], tenant.ids["record"]
    tab.sign_in(tenant.tokens["admin"], f"/ui/graph?scope={scope}&focus={record}")
    page = tab.page
    expect(page.locator("#graph-summary")).to_contain_text("7 records and 1 memories")
    expect(page.locator("#graph g.node")).to_have_count(8)
    expect(page.locator(f"#node-{record}")).to_have_class("node n-SESSION hub focus")
    before = page.locator("#graph").get_attribute("viewBox")
    page.get_by_role("button", name="Zoom in").click()
    assert page.locator("#graph").get_attribute("viewBox") != before
    dot = page.locator("#graph g.n-EPISODE circle").bounding_box()
    assert dot is not None
    page.mouse.click(dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)  # on the node's circle
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
