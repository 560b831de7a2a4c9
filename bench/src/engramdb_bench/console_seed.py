"""A tenant an operator would recognise, written through the REST API, for the dashboard's screenshots
and its browser tests: two users of a support agent with episodes, corrected, pending, archived and
pinned facts, a knowledge graph of a session's decisions and tasks, and a few recalls.

``ConsoleServer`` is the real app on a SQLite folder, served on 127.0.0.1 (the harness opens stores
through the registry); ``seed`` fills a server; ``pages`` lists every page with what to do on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from engramdb.api.loopback import LoopbackServer
from engramdb.api.rest import create_app
from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.registry import open_store

TENANT = "acme"
HOST = {"agentId": "support", "profileId": "default"}
NAMED = {"privacyScope": "private", "sandboxEligible": False}
ALICE, BOB = "alice@example.com", "bob@example.com"


class ConsoleServer(LoopbackServer):
    """The app over loopback HTTP on a SQLite folder, with keys made as the operator would."""

    def __init__(self, home: Path) -> None:
        settings = Settings(home=home, embedder="hashing", embed_poll_seconds=0.05)
        self.store = open_store(f"sqlite:///{home}")
        super().__init__(create_app(settings, store=self.store, embedder=HashingEmbedder()))

    def key(self, role: str, **grant: Any) -> str:
        token, _ = auth.create_key(self.store, tenant=TENANT, role=role, grant=grant, create_tenant=True)
        return token


KeyMaker = Callable[..., str]  # key(role, **grant) -> token, in the tenant being seeded


@dataclass
class Seeded:
    """The keys and the ids the pages are opened with."""

    tokens: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)


def _ok(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code in (200, 201), answer.text
    return dict(answer.json())


def _turns(http: httpx.Client, user: str, turns: list[tuple[str, str, str]]) -> list[str]:
    ids = []
    for i, (session, said, answered) in enumerate(turns):
        body = {"userText": said, "assistantText": answered, "externalSessionId": session, "turnIndex": i}
        ids.append(_ok(http.post("/v1/episodes", json={**body, "userId": user, **NAMED}))["id"])
    return ids


def _fact(http: httpx.Client, user: str, text: str, kind: str, **options: Any) -> str:
    body = {"text": text, "subjectKey": "user", "kind": kind, "userId": user, **NAMED}
    return str(_ok(http.post("/v1/facts", params=options, json=body))["id"])


def _alice(http: httpx.Client, ids: dict[str, str]) -> None:
    episodes = _turns(
        http,
        ALICE,
        [
            ("billing-kickoff", "Use TypeScript for the billing service.", "Will do: TypeScript it is."),
            ("billing-kickoff", "Invoices go out on the first of the month.", "Noted, monthly on the 1st."),
            ("billing-kickoff", "Alice owns the invoice migration.", "I will track it as her task."),
            ("deploys", "Deploy billing on Fridays after 14:00 UTC.", "Friday afternoons, understood."),
            ("deploys", "The staging database lives in Frankfurt.", "Staging: Frankfurt."),
        ],
    )
    ids["episode"] = episodes[0]
    scope = {"userId": ALICE, **NAMED}
    ids["editor"] = _fact(http, ALICE, "The user edits in vim.", "editor")
    corrected = {"text": "The user edits in helix.", "reason": "switched editors in May", "scope": scope}
    ids["fact"] = _ok(http.post(f"/v1/facts/{ids['editor']}/correct", json=corrected))["id"]
    ids["language"] = _fact(http, ALICE, "The user prefers TypeScript for backend services.", "language")
    ids["timezone"] = _fact(http, ALICE, "The user works in the Europe/Berlin time zone.", "timezone")
    ids["pending"] = _fact(http, ALICE, "The user drinks green tea.", "drink", origin="derived")
    ids["stale"] = _fact(http, ALICE, "The user is on the payments team.", "team")
    http.post(f"/v1/facts/{ids['stale']}/archive", json={"reason": "team changed in the reorg", "scope": scope})
    http.post(f"/v1/facts/{ids['language']}/mark", json={"pinned": True, "reason": "core preference", "scope": scope})
    written = _ok(
        http.post(
            "/v1/records",
            json={
                "label": "SESSION",
                "mergeBy": ["title"],
                "scope": scope,
                "data": {
                    "title": "Billing kickoff",
                    "startedAt": "2026-11-30T09:00:00Z",
                    "DECISION": [
                        {"title": "Use TypeScript for the billing service", "topic": "billing"},
                        {"title": "Invoices go out monthly", "topic": "billing"},
                    ],
                    "TASK": [
                        {"title": "Write the invoice migration", "status": "open", "assignee": "Alice"},
                        {"title": "Set up the Friday deploy window", "status": "done", "assignee": "Sam"},
                    ],
                    "ENTITY": [{"name": "Billing service", "kind": "service"}, {"name": "Alice", "kind": "person"}],
                },
            },
        )
    )
    ids["record"] = written["records"][0]["id"]
    link = {"source": ids["record"], "target": {"id": episodes[0], "kind": "EPISODE"}, "type": "MENTIONS"}
    _ok(http.post("/v1/relationships", json={**link, "scope": scope}))
    for query in ("TypeScript billing", "when do we deploy", "staging database", "zzqx flibbertigibbet"):
        _ok(http.post("/v1/recall", json={"query": query, "scope": scope}))


def _bob(http: httpx.Client) -> None:
    _turns(
        http,
        BOB,
        [
            ("onboarding", "I keep my notes in Obsidian.", "I will link to Obsidian notes."),
            ("onboarding", "Please answer in short bullet points.", "Short bullets from now on."),
        ],
    )
    _fact(http, BOB, "The user keeps notes in Obsidian.", "notes")
    _fact(http, BOB, "The user prefers short bullet-point answers.", "style")


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def seed(url: str, key: KeyMaker) -> Seeded:
    """Write the tenant through the API at ``url`` with keys ``key`` makes; return the keys of every
    role and the ids pages need."""
    tokens = {role: key(role) for role in ("admin", "reviewer")}
    tokens["host"] = key("host", **HOST)
    done = Seeded(tokens)
    with _client(url, tokens["host"]) as http:
        _alice(http, done.ids)
        _bob(http)
        alice = _ok(http.post("/v1/scope/resolve", json={"userId": ALICE, **NAMED}))
    with _client(url, tokens["admin"]) as http:
        scopes = _ok(http.get("/v1/scopes"))["scopes"]
    done.ids["scope"] = next(
        s["scopeKey"] for s in scopes if s["participantScopeHash"] == alice["participantScopeHash"]
    )
    done.ids["participant"] = str(alice["participantScopeHash"])
    return done


Act = Callable[[Any], None]  # something done on the page (a Playwright Page) before it is looked at


def _recall(page: Any) -> None:
    page.get_by_label("Query").fill("TypeScript billing")
    page.get_by_label("Query").press("Enter")
    page.locator("pre.context").wait_for()


def _find(page: Any) -> None:
    page.get_by_label("User id, as your application knows them").fill(ALICE)
    page.get_by_role("button", name="Find", exact=True).click()
    page.locator("#participant-scopes").wait_for()


def _verified(page: Any) -> None:
    page.locator("#verdict").wait_for()


def pages(ids: dict[str, str]) -> list[tuple[str, str, Act | None]]:
    """Every page of the dashboard with content on it: (name, path, what to do there first)."""
    scope = ids["scope"]
    return [
        ("memories", f"/ui/memories?scope={scope}&history=true", None),
        ("recall", f"/ui/recall?scope={scope}", _recall),
        ("fact-timeline", f"/ui/facts/{ids['fact']}?scope={scope}", None),
        ("episode", f"/ui/episodes/{ids['episode']}?scope={scope}", None),
        ("records", f"/ui/records?scope={scope}", None),
        ("record", f"/ui/records/{ids['record']}?scope={scope}", None),
        ("graph", f"/ui/graph?scope={scope}", None),
        ("people", "/ui/people", _find),
        ("review", "/ui/review", None),
        ("audit", "/ui/audit", _verified),
        ("usage", "/ui/usage", None),
        ("jobs", "/ui/jobs", None),
        ("admin", "/ui/admin", None),
    ]
