"""Idle endpoints cost the deliverer one statement a tenant, not a try each (5,000 idle endpoints of
one tenant were each stepped every poll, 0.94 cores: a review); and a tenant has at most
MAX_WEBHOOKS of them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from engramdb.config import Settings
from engramdb.contract.writes import EpisodeWrite
from engramdb.core.auth import Caller
from engramdb.core.changes import feed
from engramdb.core.changes.webhooks import MAX_WEBHOOKS
from engramdb.core.service import MemoryService
from engramdb.jobs.webhooks import WebhookWorker
from engramdb.models.webhooks import WebhookCreate
from engramdb.storage.port import Store, TenantStore
from tests.changes.conftest import FAST
from tests.changes.test_webhooks import wait_for
from tests.conftest import LiveServer
from tests.factories import episode_body, scope_fields

UNUSED = "http://127.0.0.1:9/hook"  # nothing listens: a try fails at once


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    webhooks = FAST.model_copy(update={"backoff_seconds": 600.0, "max_backoff_seconds": 600.0})
    return Settings(home=tmp_path / "home", embedder="hashing", webhooks=webhooks)


class CountingWorker(WebhookWorker):
    """The real deliverer over the real store, its thread not started: each round is one look for work."""

    def __init__(self, store: Store, settings: Settings, service: MemoryService) -> None:
        super().__init__(store, settings.webhooks, service.webhooks.keys)
        self.stepped: list[str] = []

    def step(self, tenant_name: str, webhook_id: str) -> str | None:
        self.stepped.append(webhook_id)
        return super().step(tenant_name, webhook_id)

    def round(self) -> list[str]:
        """The endpoints one look for work started a try for, once those tries have run."""
        self.stepped.clear()
        self.dispatch()
        while self._busy:
            time.sleep(0.01)
        return sorted(self.stepped)


def _write(service: MemoryService, operator: Caller, turn: int) -> None:
    body = episode_body(f"Turn {turn}.", session="hooks", turn=turn, scope=scope_fields())
    service.writes.write_episode(operator, EpisodeWrite.model_validate(body))


def test_only_endpoints_with_work_are_tried(
    store: Store, settings: Settings, service: MemoryService, operator: Caller
) -> None:
    ids = sorted(service.webhooks.create_webhook(operator, WebhookCreate(url=UNUSED)).webhook_id for _ in range(3))
    worker = CountingWorker(store, settings, service)
    try:
        assert worker.round() == ids  # each passes over the audit entries of the registrations after it
        assert worker.round() == []  # idle: none is tried
        _write(service, operator, 0)
        assert worker.round() == ids  # the control: a change makes each of them due; each try fails
        assert worker.round() == []  # each has a delivery waiting out its backoff: not tried before it
        tenant = store.tenant("t1")
        assert all(tenant.webhooks.next_delivery(w) is not None for w in ids)
        service.webhooks.delete_webhook(operator, ids[0])
        assert worker.round() == []
        assert ("t1", ids[0]) not in worker._started and ("t1", ids[1]) in worker._started  # a deleted one's turn goes
    finally:
        worker._pool.shutdown(wait=True)  # its thread was never started: only the pool to close


def test_an_endpoint_passing_over_other_kinds_is_looked_at_again_at_once(
    store: Store, settings: Settings, service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A try reads at most MAX_SCAN entries of the feed; an endpoint with entries left to pass over is
    tried again at once, not after the next poll (an hour here)."""
    monkeypatch.setattr(feed, "PAGE", 4)
    monkeypatch.setattr(feed, "MAX_SCAN", 8)
    created = service.webhooks.create_webhook(operator, WebhookCreate(url=UNUSED, kinds=["deleted"]))
    for turn in range(40):  # 40 changes of another kind: five tries' worth
        _write(service, operator, turn)
    tenant = store.tenant("t1")
    hourly = settings.webhooks.model_copy(update={"poll_seconds": 3600.0})
    worker = WebhookWorker(store, hourly, service.webhooks.keys)
    worker.start()
    try:
        wait_for(lambda: _cursor(tenant, created.webhook_id) == tenant.changes.head())
    finally:
        worker.stop()


def test_a_pass_over_that_reaches_the_head_waits_for_the_next_poll(
    store: Store, settings: Settings, service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a try per write of other kinds: only a pass over a whole scan asks to look again at once."""
    monkeypatch.setattr(feed, "PAGE", 1)
    monkeypatch.setattr(feed, "MAX_SCAN", 2)
    created = service.webhooks.create_webhook(operator, WebhookCreate(url=UNUSED, kinds=["deleted"]))
    for turn in range(5):
        _write(service, operator, turn)
    tenant = store.tenant("t1")
    worker = WebhookWorker(store, settings.webhooks, service.webhooks.keys)
    try:
        outcomes = []
        while (outcome := worker.step("t1", created.webhook_id)) is not None:
            outcomes.append(outcome)
        assert outcomes and set(outcomes) == {"passed"}  # whole scans of 2 while more were behind
        assert _cursor(tenant, created.webhook_id) == tenant.changes.head()
        _write(service, operator, 5)  # one more of another kind: passed over, and no look again at once
        assert worker.step("t1", created.webhook_id) is None
        assert _cursor(tenant, created.webhook_id) == tenant.changes.head()
    finally:
        worker._pool.shutdown(wait=True)


def _cursor(tenant: TenantStore, webhook_id: str) -> int:
    row = tenant.webhooks.get_webhook(webhook_id)
    assert row is not None
    return row.cursor


def test_a_tenant_has_at_most_max_webhooks(server: LiveServer) -> None:
    with server.client(server.key(role="admin")) as admin:
        created = [admin.post("/v1/webhooks", json={"url": UNUSED}) for _ in range(MAX_WEBHOOKS)]
        assert all(answer.status_code == 201 for answer in created)
        refused = admin.post("/v1/webhooks", json={"url": UNUSED})
        assert refused.status_code == 409 and refused.json()["field"] == "url", refused.text
        assert len(admin.get("/v1/webhooks").json()["webhooks"]) == MAX_WEBHOOKS  # nothing of it was kept
        assert admin.delete(f"/v1/webhooks/{created[0].json()['webhookId']}").status_code == 204
        again = admin.post("/v1/webhooks", json={"url": UNUSED})  # the control: room again after a delete
        assert again.status_code == 201, again.text
        with server.client(server.key(tenant="t2", role="admin")) as elsewhere:
            assert elsewhere.post("/v1/webhooks", json={"url": UNUSED}).status_code == 201  # per tenant
