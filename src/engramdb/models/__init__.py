"""The server's models: requests, answers and views, a module per area."""

from __future__ import annotations

import importlib
from types import ModuleType


def __getattr__(name: str) -> ModuleType:
    """A module of this package, imported when first named: the SDK's annotations name models by module."""
    module = f"{__name__}.{name}"
    try:
        return importlib.import_module(module) if not name.startswith("_") else _no(name)
    except ModuleNotFoundError as missing:
        if missing.name != module:
            raise  # the module exists and fails to import: say so
        return _no(name)


def _no(name: str) -> ModuleType:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
