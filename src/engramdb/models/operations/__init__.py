"""Every operation of EngramDB, declared once, a module per area. The surfaces are built from this list.

To add an operation: declare it in its area's module, write its service method (in the core area
that runs it: ``MemoryService.operation(name)`` finds it), and run ``python -m
engramdb.devtools.generate`` (the typed SDK methods and the docs tables). The parity test
(tests/surfaces/test_registry.py) fails until every surface has it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engramdb.models.operations.registry import BY_NAME, OPERATIONS

__all__ = ["BY_NAME", "OPERATIONS"]


def __getattr__(name: str) -> Any:
    """``OPERATIONS`` and ``BY_NAME``, imported on first use: building every area's models is a third of
    a second, which a hook or an SDK call that needs one area should not pay (registry.py)."""
    if name in __all__:
        from engramdb.models.operations import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
