"""Every page by keyboard alone, and axe-core (from PyPI, run in the page) finds no serious violation."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe  # type: ignore[import-untyped]  # ships no type information
from playwright.sync_api import Page, expect

from tests.factories import fact_body
from tests.ui.conftest import Tab
from tests.ui.seed import write

SERIOUS = ("serious", "critical")
FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex='0']"


def _pages(tab: Tab) -> list[tuple[str, str]]:
    """Every page of the dashboard with content on it, for an admin."""
    ids = write(tab.server, tab.server.key())
    with tab.server.client(tab.server.key(role="admin")) as http:
        scope_key = http.get("/v1/scopes").json()["scopes"][0]["scopeKey"]
    return [
        ("memories", "/ui/memories"),
        ("recall", "/ui/recall"),
        ("timeline", f"/ui/facts/{ids['editor']}?scope={scope_key}"),
        ("review", "/ui/review"),
        ("audit", "/ui/audit"),
        ("admin", "/ui/admin"),
    ]


def _recalled(page: Page) -> None:
    page.get_by_label("Query").fill("billing")
    page.get_by_label("Query").press("Enter")
    expect(page.locator("pre.context")).to_be_visible()


def _serious(page: Page) -> list[str]:
    results = Axe().run(page).response
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}"
        for v in results["violations"]
        if v["impact"] in SERIOUS
    ]


def test_axe_finds_no_serious_violation_on_any_page(tab: Tab) -> None:
    tab.page.goto(f"{tab.server.url}/ui/signin")
    assert _serious(tab.page) == [], "signin"
    tab.sign_in(tab.server.key(role="admin"))
    for name, path in _pages(tab):
        tab.open(path)
        if name == "recall":
            _recalled(tab.page)
        if name == "audit":
            expect(tab.page.locator("#verdict")).to_be_visible()
        assert _serious(tab.page) == [], name
    # The positive control: the same check on a page made to fail does report it.
    tab.page.set_content('<html><body><img src="data:,"><button></button><input></body></html>')
    assert {v.split(" ")[0] for v in _serious(tab.page)} >= {"image-alt", "button-name"}
    assert tab.heard.csp_refusals  # that page's image was refused by the policy still in force: heard, let go
    tab.heard.csp.clear()
    tab.heard.console_errors.clear()


def test_every_control_of_every_page_is_reached_with_tab(tab: Tab) -> None:
    tab.sign_in(tab.server.key(role="admin"))
    for name, path in _pages(tab):
        tab.open(path)
        if name == "recall":
            _recalled(tab.page)
        if name == "audit":
            expect(tab.page.locator("#verdict")).to_be_visible()
        total = tab.page.evaluate(
            """selector => { const all = [...document.querySelectorAll(selector)]
            .filter(e => e.getClientRects().length && !e.disabled);
            all.forEach((e, i) => e.dataset.kb = i); return all.length; }""",
            FOCUSABLE,
        )
        assert total > 5, name  # the page has controls to reach
        tab.page.locator("body").focus()
        reached: set[str] = set()
        for _ in range(total * 2 + 10):
            tab.page.keyboard.press("Tab")
            reached.add(str(tab.page.evaluate("document.activeElement.dataset.kb")))
        missed = tab.page.evaluate(
            """([ids]) => [...document.querySelectorAll('[data-kb]')]
            .filter(e => !ids.includes(e.dataset.kb)).map(e => e.outerHTML.slice(0, 80))""",
            [sorted(reached)],
        )
        assert missed == [], (name, missed)
        outline = tab.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", name  # where the focus is can be seen


def test_a_review_decision_by_keyboard_alone(tab: Tab) -> None:
    with tab.server.client(tab.server.key()) as http:
        for text, kind in [("The user drinks green tea.", "drink"), ("The user reads Le Guin.", "books")]:
            http.post("/v1/facts", params={"origin": "derived"}, json=fact_body(text, kind=kind, sourceEventId=kind))
    page = tab.page
    page.goto(f"{tab.server.url}/ui/signin?next=/ui/review")
    page.keyboard.press("Tab")  # to the key field
    page.keyboard.type(tab.server.key(role="reviewer"))
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url.endswith("/ui/review"))
    tab.loaded()
    approve = page.locator("li.item").first.get_by_role("button", name="Approve", exact=True)
    for _ in range(40):  # Tab along until the first fact's Approve button has the focus
        if approve.evaluate("e => e === document.activeElement"):
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("p.done")).to_contain_text("Approved “The user drinks green tea.”")
    # The focus moved to the next fact's first control: type a reason there and press Enter to reject.
    expect(page.locator("li.item .pick").first).to_be_focused()
    page.keyboard.press("Tab")  # past its Select box to Approve, then to Reason
    page.keyboard.press("Tab")
    page.keyboard.type("the user never said so")
    page.keyboard.press("Enter")
    expect(page.locator("p.done")).to_contain_text("Rejected “The user reads Le Guin.”")
    expect(page.locator("main")).to_contain_text("Nothing awaits review.")
