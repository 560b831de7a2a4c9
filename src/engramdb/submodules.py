"""A package attribute that imports the package's submodule of that name when first named.

The SDK's typed methods name each model by its module (``models.recall.RecallResponse``) and
import none up front; resolving such an annotation (``typing.get_type_hints``) imports the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType


def on_first_use(package: str) -> Callable[[str], ModuleType]:
    """A module ``__getattr__`` for ``package``: ``package.name`` imports ``package.name``."""

    def attribute(name: str) -> ModuleType:
        module = f"{package}.{name}"
        if name.startswith("_"):  # dunder look-ups (__path__, __wrapped__, ...) are never submodules
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as missing:
            if missing.name != module:
                raise  # the module exists and fails to import: say so
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from missing

    return attribute
