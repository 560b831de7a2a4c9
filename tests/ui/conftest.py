"""A real server and Debian's Chromium, driven by Playwright (never ``playwright install``).

One browser for the browser tests; each test gets a fresh context (its own session storage) and a
page that records what the browser said: console errors, uncaught script errors, dialogs and
Content-Security-Policy violations (the page's own ``securitypolicyviolation`` events, reported
through a binding, and Chromium's console lines). A test fails on any of them, unless it said
beforehand which refused requests it provokes (``Tab.allow``): the only console errors a test may
cause are the browser's lines for those statuses. Screenshots go to ``ENGRAM_SCREENSHOTS``
(default ``.screenshots/`` beside the tests' checkout); ``python -m engramdb_bench.screenshots``
writes the documentation's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from engramdb.config import Settings
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.ui.chromium import INSTALL_SECONDS, chromium_missing, ensure_chromium

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("ENGRAM_SCREENSHOTS") or ROOT / ".screenshots")
DESKTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}
# Every violation the page sees, whatever the console prints, reaches the test through this binding.
WATCH_CSP = """document.addEventListener('securitypolicyviolation', e =>
  window.__engramCsp([e.violatedDirective, e.blockedURI, e.sourceFile, e.lineNumber, e.sample].join(' | ')));"""
expect.set_options(timeout=15_000)  # waits for the page, not a time limit: CI machines may be busy


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Where Chromium is still missing, the browser tests may take the install's time: the first of them
    installs it (tests/ui/chromium.py), and the others wait for it, so a test's limit must not cut apt off."""
    if not chromium_missing():
        return
    for item in items:
        if Path(item.path).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.timeout(INSTALL_SECONDS))


# For the browser tests only (not the session): Playwright's sync API keeps an event loop running in
# this thread while it is open, and asyncio.run() in any later test of the same worker would refuse.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # Never skipped when missing: a browser test must run, so the first one installs Debian's chromium.
    launched = playwright.chromium.launch(executable_path=ensure_chromium(), args=FLAGS)
    yield launched
    launched.close()


@pytest.fixture
def ui(tmp_path: Path) -> Iterator[LiveServer]:
    """The real app on a real SQLite folder, served by uvicorn on 127.0.0.1."""
    settings = Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05)
    server = LiveServer(settings, SQLiteStore(settings.home), HashingEmbedder())
    server.start()
    yield server
    server.stop()


@dataclass
class Heard:
    """What the browser reported while a test ran."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)  # securitypolicyviolation events
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    @property
    def csp_refusals(self) -> list[str]:
        return self.csp + [m for m in self.console_errors if "Content Security Policy" in m]

    @property
    def unexpected(self) -> list[str]:
        return [m for m in self.console_errors if not any(p.fullmatch(m) for p in self.allowed)]


@dataclass
class Tab:
    """A page of a fresh browser context, and what it heard."""

    page: Page
    heard: Heard
    server: LiveServer

    def allow(self, *statuses: int) -> None:
        """Let the browser's console report these refused requests (a test that provokes them says so)."""
        for status in statuses:  # the browser's line, and htmx's own for a part it swaps anyway
            self.heard.allowed.append(
                re.compile(f"Failed to load resource: the server responded with a status of {status} .*")
            )
            self.heard.allowed.append(re.compile(f"Response Status Error Code {status} from .*"))

    def sign_in(self, token: str, path: str = "/ui/memories") -> None:
        """Sign in through the form, as a person would, then open ``path``."""
        self.page.goto(f"{self.server.url}/ui/signin?next={quote(path)}")
        self.page.get_by_label("API key").fill(token)
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_url(lambda url: urlsplit(url).path == urlsplit(path).path)
        self.loaded()

    def open(self, path: str) -> None:
        self.page.goto(f"{self.server.url}{path}")
        self.loaded()

    def loaded(self) -> None:
        """Wait until the page's content replaced its loading line."""
        expect(self.page.locator("main .loading")).to_have_count(0)

    def phone(self) -> None:
        self.page.set_viewport_size(PHONE)  # type: ignore[arg-type]  # a plain dict, as new_context takes

    def overflow(self) -> int:
        """How far the page is wider than the window, in CSS pixels (0: it fits)."""
        return int(self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def listen(page: Page, heard: Heard) -> None:
    """Record on ``heard`` what ``page`` reports: console errors, script errors, dialogs, CSP violations."""
    page.on("console", lambda m: heard.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: heard.page_errors.append(str(e)))

    def dialog(d: Any) -> None:
        heard.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)


@pytest.fixture
def tab(browser: Browser, ui: LiveServer) -> Iterator[Tab]:
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    heard = Heard()
    context.expose_binding("__engramCsp", lambda _source, line: heard.csp.append(str(line)))
    context.add_init_script(WATCH_CSP)
    page = context.new_page()
    listen(page, heard)
    yield Tab(page, heard, ui)
    context.close()
    # Whatever a test did, the page never broke its own policy, no script failed, and the console
    # holds no error but the refusals the test said it provokes.
    assert heard.csp_refusals == [] and heard.page_errors == [] and heard.unexpected == [], heard
