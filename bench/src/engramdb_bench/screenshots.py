"""Screenshots of every dashboard page at a desktop's and a phone's width, for docs/screenshots.

    python -m engramdb_bench.screenshots                  # writes docs/screenshots/<page>-<width>.png
    python -m engramdb_bench.screenshots --out /tmp/shots

Starts the real server on a temporary SQLite folder, writes the tenant of ``console_seed`` through
the REST API, signs in with an admin key through the form and photographs each page of
``console_seed.pages`` in Debian's headless Chromium at 1366x850 and 390x844 (the whole page).
Needs Playwright (the test extras) and ``apt-get install -y chromium``; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from engramdb_bench.console_seed import ConsoleServer, pages, seed

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
WIDTHS = {"desktop": (1366, 850), "phone": (390, 844)}


def _settled(page: Page) -> None:
    page.locator("main .loading").wait_for(state="detached")
    page.wait_for_load_state("networkidle")


def take(out: Path) -> list[Path]:
    """Photograph every page at both widths into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    server = ConsoleServer(Path(tempfile.mkdtemp(prefix="engram-shots-")) / "home")
    server.start()
    written: list[Path] = []
    try:
        seeded = seed(server.url, server.key)
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for width_name, (width, height) in WIDTHS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"{server.url}/ui/signin")
                written.append(_shot(page, out / f"signin-{width_name}.png"))
                page.get_by_label("API key").fill(seeded.tokens["admin"])
                page.get_by_label("API key").press("Enter")
                page.wait_for_url(lambda url: url.endswith("/ui/memories"))
                for name, path, act in pages(seeded.ids):
                    page.goto(f"{server.url}{path}")
                    _settled(page)
                    if act is not None:
                        act(page)
                    written.append(_shot(page, out / f"{name}-{width_name}.png"))
                page.close()
            browser.close()
    finally:
        server.stop()
    return written


def _shot(page: Page, path: Path) -> Path:
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    return path


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"), help="where the PNG files go")
    args = parser.parse_args(argv)
    for path in take(args.out):
        print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
