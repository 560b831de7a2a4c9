"""The feed's and webhooks' tests run with deliveries retried within fractions of a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from engramdb.config import Settings, WebhookSettings

FAST = WebhookSettings(backoff_seconds=0.05, max_backoff_seconds=0.2, attempts=3, poll_seconds=0.05, batch_size=5)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", embedder="hashing", embed_poll_seconds=0.05, webhooks=FAST)
