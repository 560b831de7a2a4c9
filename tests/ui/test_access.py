"""Every page at a desktop's and a phone's width: axe-core (from PyPI, run in the page) finds no
serious violation, nothing is wider than the window, and every control is reached by keyboard alone."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe  # type: ignore[import-untyped]  # ships no type information
from playwright.sync_api import Page, expect

from engramdb_bench.console_seed import Seeded, pages, seed
from tests.factories import fact_body
from tests.ui.conftest import Tab

SERIOUS = ("serious", "critical")
FOCUSABLE = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex='0']"


def seeded(tab: Tab) -> Seeded:
    """The tenant of the screenshots, written into this test's server through its API."""
    return seed(tab.server.url, lambda role, **grant: tab.server.key(role=role, **grant))


def serious(page: Page) -> list[str]:
    """What axe-core finds of serious or critical impact on the page as it is."""
    results = Axe().run(page).response
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}"
        for v in results["violations"]
        if v["impact"] in SERIOUS
    ]


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_every_page_passes_axe_and_fits_the_window(tab: Tab, width: str) -> None:
    tenant = seeded(tab)
    if width == "phone":
        tab.phone()
    tab.page.goto(f"{tab.server.url}/ui/signin")
    assert serious(tab.page) == [] and tab.overflow() == 0, "signin"
    tab.sign_in(tenant.tokens["admin"])
    for name, path, act in pages(tenant.ids):
        tab.open(path)
        if act is not None:
            act(tab.page)
        assert serious(tab.page) == [], (name, width)
        assert tab.overflow() == 0, (name, width)  # no page is wider than the window
    # Positive controls: a page made wider than the window is measured so, and axe reports a page
    # made to fail.
    tab.page.evaluate(
        """document.querySelector('main').insertAdjacentHTML('beforeend',
        '<img alt="" width="2400" height="10" src="/ui/assets/favicon.svg">')"""
    )
    assert tab.overflow() > 0
    tab.page.set_content('<html><body><img src="data:,"><button></button><input></body></html>')
    assert {v.split(" ")[0] for v in serious(tab.page)} >= {"image-alt", "button-name"}
    assert tab.heard.csp_refusals  # that page's image was refused by the policy still in force: heard, let go
    tab.heard.csp.clear()
    tab.heard.console_errors.clear()


def test_every_control_of_every_page_is_reached_with_tab(tab: Tab) -> None:
    tenant = seeded(tab)
    tab.sign_in(tenant.tokens["admin"])
    for name, path, act in pages(tenant.ids):
        tab.open(path)
        if act is not None:
            act(tab.page)
        total = tab.page.evaluate(
            """selector => { document.querySelectorAll('details').forEach(d => { d.open = true; });  // inside too
            const all = [...document.querySelectorAll(selector)]
            .filter(e => e.getClientRects().length && !e.disabled);
            all.forEach((e, i) => e.dataset.kb = i); return all.length; }""",
            FOCUSABLE,
        )
        assert total > 5, name  # the page has controls to reach
        # Where each press takes the focus, as the page sees it: recorded there, read once after the presses.
        tab.page.evaluate("""() => { window.kbReached = [];
            document.addEventListener('focusin', e => window.kbReached.push(e.target.dataset.kb)); }""")
        tab.page.locator("body").focus()
        for _ in range(total * 2 + 10):
            tab.page.keyboard.press("Tab")
        missed = tab.page.evaluate(
            """() => [...document.querySelectorAll('[data-kb]')]
            .filter(e => !window.kbReached.includes(e.dataset.kb)).map(e => e.outerHTML.slice(0, 80))"""
        )
        assert missed == [], (name, missed)
        for _ in range(total):  # on from past the last control (the browser's own stops) to one of the page's
            if tab.page.evaluate("document.activeElement.dataset.kb !== undefined"):
                break
            tab.page.keyboard.press("Tab")
        outline = tab.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", (name, tab.page.evaluate("document.activeElement.outerHTML.slice(0, 120)"))


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
