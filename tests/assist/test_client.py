"""The chat model client itself: bounded concurrency, and the ledger kept per tenant."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from engramdb.core.auth import Caller
from engramdb.core.embedding import HashingEmbedder
from engramdb.core.service import MemoryService
from engramdb.models.assist import UsageQuery
from engramdb.storage.port import Store
from tests.assist.conftest import llm_settings
from tests.assist.helpers import extract
from tests.factories import scope_fields
from tests.sdk.chat_server import ScriptedChat


class _Counting:
    """A model that holds each request a moment and counts how many it holds at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.2)
        with self.lock:
            self.now -= 1
        return '{"facts": []}'


def _most_at_once(store: Store, tmp_path: Path, agent: Caller, slots: int) -> int:
    counting = _Counting()
    chat = ScriptedChat(counting)
    try:
        service = MemoryService(
            store, HashingEmbedder(), llm_settings(tmp_path / str(slots), chat.url, max_concurrency=slots)
        )
        threads = [threading.Thread(target=extract, args=(service, agent, f"turn {i}")) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        chat.close()
    return counting.most


def test_calls_beyond_max_concurrency_wait_for_a_slot(store: Store, tmp_path: Path, agent: Caller) -> None:
    store.tenant("t1", create=True)
    assert _most_at_once(store, tmp_path, agent, 2) == 2
    assert _most_at_once(store, tmp_path, agent, 4) >= 3  # the control: more slots, more at once


def test_the_ledger_is_per_tenant(service: MemoryService, agent: Caller) -> None:
    extract(service, agent, "The user has a cat.")
    service.shared.store.tenant("t2", create=True)
    other = Caller(tenant="t2", key_id="admin-2", role="admin")
    assert service.assist.assist_usage(other, UsageQuery()).total.calls == 0
    assert service.assist.assist_usage(Caller("t1", "admin-1", "admin"), UsageQuery()).total.calls == 1
    t2_agent = Caller(tenant="t2", key_id="agent-2", role="agent", grant=scope_fields())
    extract(service, t2_agent, "The user has a dog.")
    assert service.assist.assist_usage(other, UsageQuery()).total.calls == 1
