"""Every page opens for an admin key and shows its content."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.ui.conftest import Tab
from tests.ui.seed import write


def test_every_page_opens_for_an_admin(tab: Tab) -> None:
    admin = tab.server.key(role="admin")
    write(tab.server, tab.server.key())
    tab.sign_in(admin)
    for path, heading in [("/ui/memories", "Memories"), ("/ui/recall", "Recall playground"),
                          ("/ui/review", "Review queue"), ("/ui/audit", "Audit log"), ("/ui/admin", "Admin")]:  # fmt: skip
        tab.open(path)
        expect(tab.page.locator("main h1")).to_contain_text(heading)
        tab.shot(f"smoke-{path.rsplit('/', 1)[1]}")
