"""How long the dashboard takes to show a page of memories, in Debian's headless Chromium.

    .venv/bin/python bench/scripts/ui_render.py --memories 1000 --runs 10

Starts the real server (uvicorn on 127.0.0.1, SQLite in a temporary folder, the hashing
embedder), writes ``--memories`` episodes and as many facts into one scope through the REST
API, signs in through the form, then opens the Memories page ``--runs`` times and reports, per
page, the time from the start of the navigation to the frame after the last row is in the
document (``performance.now()`` two animation frames after it, so layout and paint are done),
and the server's time for the page's data part alone. Needs the test extras (Playwright) and
``apt-get install -y chromium``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[2]  # the checkout (this file is bench/scripts/)
sys.path.insert(0, str(ROOT))

from engramdb.config import Settings  # noqa: E402
from engramdb.core.embedding import HashingEmbedder  # noqa: E402
from engramdb.storage.registry import open_store  # noqa: E402
from tests.conftest import LiveServer  # noqa: E402
from tests.factories import episode_body, fact_body  # noqa: E402
from tests.ui.conftest import CHROMIUM, FLAGS  # noqa: E402

PAINTED = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"


def _fill(server: LiveServer, token: str, count: int) -> None:
    with server.client(token) as http:
        for start in range(0, count, 100):
            episodes = [
                episode_body(
                    f"Turn {i}: the user talked about billing, deploys and editors.", turn=i, session=f"s{i // 50}"
                )
                for i in range(start, min(start + 100, count))
            ]
            assert http.post("/v1/episodes/batch", json={"episodes": episodes}).status_code == 200
        for i in range(count):  # multi-valued kind: every fact stays current
            assert (
                http.post(
                    "/v1/facts", json=fact_body(f"The user likes topic {i}.", kind="likes", sourceEventId=f"f{i}")
                ).status_code
                == 201
            )
        deadline = time.monotonic() + 300  # measure a quiet server: the embedding worker done
        while {
            m["embedding"]["state"]
            for listing in (
                http.get("/v1/episodes", params={"limit": count}).json()["episodes"],
                http.get("/v1/facts", params={"limit": count}).json()["facts"],
            )
            for m in listing
        } != {"ready"}:
            assert time.monotonic() < deadline, "the memories were not embedded"
            time.sleep(0.2)


def _timed(page: Page, url: str, rows: str, count: int) -> float:
    page.goto(url)
    page.locator(f"{rows}:nth-child({count})").wait_for()
    return float(page.evaluate(PAINTED))


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp()) / "home"
    server = LiveServer(Settings(home=home, embedder="hashing"), open_store(f"sqlite:///{home}"), HashingEmbedder())
    server.start()
    token = server.key()
    _fill(server, token, args.memories)
    pages = {"episodes": ("show=episodes", "#episodes tbody tr"), "facts": ("show=facts", "#facts tbody tr")}
    result: dict[str, Any] = {"memories": args.memories, "runs": args.runs}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{server.url}/ui/signin")
        page.get_by_label("API key").fill(token)
        page.get_by_label("API key").press("Enter")
        page.wait_for_url(lambda url: url.endswith("/ui/memories"))
        with server.client(token) as http:
            for name, (query, rows) in pages.items():
                url = f"{server.url}/ui/memories?{query}&limit={args.memories}"
                _timed(page, url, rows, args.memories)  # warm: the first load compiles templates
                browser_ms = [_timed(page, url, rows, args.memories) for _ in range(args.runs)]
                part_ms = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    assert http.get(f"/ui/part/memories?{query}&limit={args.memories}").status_code == 200
                    part_ms.append((time.perf_counter() - started) * 1000)
                result[name] = {"pageMs": _summary(browser_ms), "partMs": _summary(part_ms)}
        browser.close()
    server.stop()
    return result


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1), "max": round(ordered[-1], 1), "min": round(ordered[0], 1)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
