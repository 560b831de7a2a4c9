"""How long the operator's console takes to show its two largest pages, in Debian's headless Chromium:
the Memories page of a scope holding ``--memories`` episodes (show=episodes) and the graph of
``--nodes`` records.

    .venv/bin/python bench/scripts/console_render.py --memories 10000 --nodes 2000 --runs 5

Starts the real server (uvicorn on 127.0.0.1, SQLite in a temporary folder, the hashing embedder),
writes the episodes through ``POST /v1/episodes/batch`` and the records through ``POST /v1/records``
(sessions, each with its decisions, tasks and entities as nested records: one relationship per
child), waits for the embedding worker to finish, signs in through the form and opens each page
``--runs`` times after one warm load. Every time is from the start of the navigation to a frame after
the page's data is in the document (``performance.now()`` two animation frames later, so layout and
paint are done; each load starts from ``about:blank``, so the page before it is gone):

- ``episodes.pageMs``: the first window of episodes (``--window`` rows, the page's default) and the
  total count are shown: what the reader sees and can use (the rest load as they scroll);
- ``episodes.lastRowMs``: the ``--memories``-th (last) row is in the document, scrolling to each
  window's loading row as soon as the window before it is there (so every window is asked for);
- ``graph.pageMs``: every node of the graph is drawn on its canvas (its ``data-drawn``).

``partMs`` is the server answering the page's data part alone (httpx on loopback; the first window
for the episodes); ``load`` the 1, 5 and 15 minute load averages before and after the timed loads.
Needs the test extras (Playwright) and ``apt-get install -y chromium``.
"""

from __future__ import annotations

import argparse
import json
import os
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
from tests.factories import episode_body, scope_fields  # noqa: E402
from tests.ui.conftest import CHROMIUM, FLAGS  # noqa: E402

PAINTED = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now()))))"
CHILDREN = 19  # records under each session: a session and its children are 20 nodes


def _episodes(server: LiveServer, token: str, count: int) -> None:
    with server.client(token) as http:
        for start in range(0, count, 100):
            episodes = [
                episode_body(
                    f"Turn {i}: the user talked about billing, deploys and editors.", turn=i, session=f"s{i // 50}"
                )
                for i in range(start, min(start + 100, count))
            ]
            assert http.post("/v1/episodes/batch", json={"episodes": episodes}).status_code == 200
        deadline = time.monotonic() + 900  # measure a quiet server: the embedding worker done
        while not _all_embedded(http):
            assert time.monotonic() < deadline, "the episodes were not embedded"
            time.sleep(1)


def _all_embedded(http: Any) -> bool:
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = http.get("/v1/episodes", params=params).json()
        if any(e["embedding"]["state"] != "ready" for e in page["episodes"]):
            return False
        cursor = page.get("nextCursor")
        if not cursor:
            return True


def _records(server: LiveServer, token: str, nodes: int) -> None:
    with server.client(token) as http:
        for s in range(nodes // (CHILDREN + 1)):
            kinds = {"DECISION": 7, "TASK": 6, "ENTITY": 6}
            data: dict[str, Any] = {"title": f"Session {s}"}
            for label, n in kinds.items():
                data[label] = [
                    {"title": f"{label.lower()} {s}.{i}", "name": f"{label.lower()} {s}.{i}"} for i in range(n)
                ]
            body = {"label": "SESSION", "mergeBy": ["title"], "scope": scope_fields(), "data": data}
            answer = http.post("/v1/records", json=body)
            assert answer.status_code in (200, 201), answer.text


# Scrolls to the row that loads the next window whenever there is one, until the list's end row is there.
TO_THE_END = """async () => {
  const frame = () => new Promise(done => requestAnimationFrame(done));
  while (!document.getElementById("episodes-end")) {
    const more = document.getElementById("episodes-more");
    if (more) { more.scrollIntoView(); }
    await frame();
  }
}"""


def _timed(page: Page, url: str, ready: str) -> float:
    page.goto("about:blank")  # the page before is gone first: tearing down 10,000 rows is not this load's
    page.goto(url)
    page.locator(ready).wait_for(state="attached")
    return float(page.evaluate(PAINTED))


def _to_the_end(page: Page, last: str) -> float:
    page.evaluate(TO_THE_END)
    page.locator(last).wait_for(state="attached")
    return float(page.evaluate(PAINTED))


def _part_ms(server: LiveServer, token: str, path: str, runs: int) -> list[float]:
    times = []
    with server.client(token) as http:
        for _ in range(runs):
            started = time.perf_counter()
            assert http.get(path).status_code == 200
            times.append((time.perf_counter() - started) * 1000)
    return times


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--window", type=int, default=200, help="the Memories page's rows at a time (its default)")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp()) / "home"
    server = LiveServer(Settings(home=home, embedder="hashing"), open_store(f"sqlite:///{home}"), HashingEmbedder())
    server.start()
    token = server.key()
    _episodes(server, token, args.memories)
    _records(server, token, args.nodes)
    result: dict[str, Any] = {"memories": args.memories, "nodes": args.nodes, "runs": args.runs}
    result["load"] = {"before": os.getloadavg()}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1366, "height": 850})
        page.goto(f"{server.url}/ui/signin")
        page.get_by_label("API key").fill(token)
        page.get_by_label("API key").press("Enter")
        page.wait_for_url(lambda url: url.endswith("/ui/memories"))
        result["episodes"] = _episodes_page(page, server, token, args)
        result["graph"] = _graph_page(page, server, token, args)
        browser.close()
    result["load"]["after"] = os.getloadavg()
    server.stop()
    return result


def _episodes_page(page: Page, server: LiveServer, token: str, args: argparse.Namespace) -> dict[str, Any]:
    path = f"/ui/memories?show=episodes&limit={args.window}"
    first = f"#episodes tbody tr:nth-child({min(args.window, args.memories)})"
    ready = f"section:has(#episodes-total:text-is('{args.memories:,}')) {first}"  # the window and the total
    last = f"#episodes tbody tr:nth-child({args.memories}):not(.window-edge)"
    _timed(page, f"{server.url}{path}", ready)  # warm: the first load compiles templates
    page_ms, last_ms = [], []
    for _ in range(args.runs):
        page_ms.append(_timed(page, f"{server.url}{path}", ready))
        last_ms.append(_to_the_end(page, last))
    rows = page.locator("#episodes tbody tr:not(.window-edge)").count()
    part = path.replace("/ui/", "/ui/part/", 1)
    return {
        "window": args.window,
        "rowsAtTheEnd": rows,
        "pageMs": _summary(page_ms),
        "lastRowMs": _summary(last_ms),
        "partMs": _summary(_part_ms(server, token, part, args.runs)),
    }


def _graph_page(page: Page, server: LiveServer, token: str, args: argparse.Namespace) -> dict[str, Any]:
    path = "/ui/graph?memories=false"
    drawn = f"#graph[data-drawn='{args.nodes}']"
    _timed(page, f"{server.url}{path}", drawn)
    page_ms = [_timed(page, f"{server.url}{path}", drawn) for _ in range(args.runs)]
    return {
        "drawn": int(page.locator("#graph").get_attribute("data-drawn") or 0),
        "summary": page.locator("#graph-summary").inner_text(),
        "pageMs": _summary(page_ms),
        "partMs": _summary(_part_ms(server, token, path.replace("/ui/", "/ui/part/", 1), args.runs)),
    }


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1), "max": round(ordered[-1], 1), "min": round(ordered[0], 1)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:]), indent=2))
