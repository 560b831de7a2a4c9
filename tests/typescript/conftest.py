"""The TypeScript workspace (clients/typescript), installed and built once per test run."""

from __future__ import annotations

import pytest

from engramdb.devtools.node import build_workspace


@pytest.fixture(scope="session")
def workspace() -> dict[str, str]:
    """The environment whose node is the workspace's, after ``npm ci`` (when absent) and ``tsc -b``."""
    return build_workspace()


@pytest.fixture
def backend() -> str:
    """The plugin speaks HTTP: one backend behind the server is enough (tests/contract holds both)."""
    return "sqlite"
