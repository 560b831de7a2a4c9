"""The integrations speak HTTP (or embed the SDK): one backend behind the server is enough here,
as in tests/sdk (tests/contract and tests/surfaces hold the backends to the same behaviour), and
each Hermes session is a process of its own that imports Hermes, which is what costs time."""

from __future__ import annotations

import pytest


@pytest.fixture
def backend() -> str:
    return "sqlite"
