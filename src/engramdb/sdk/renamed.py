"""SDK method names from before model-assisted memory was called ``assist``, kept for one release.

Each old name warns (``DeprecationWarning``) and calls its new name with the same arguments; on
``AsyncClient`` the new name's coroutine is returned, so ``await`` works as before.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

RENAMED = {"list_model_jobs": "list_assist_jobs", "get_model_job": "get_assist_job", "model_usage": "assist_usage"}


def _alias(old: str) -> Callable[..., Any]:
    new = RENAMED[old]

    def method(self: object, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{old}() is deprecated: use {new}() (the old name goes in 0.3)", DeprecationWarning, stacklevel=2
        )
        return getattr(self, new)(*args, **kwargs)

    method.__name__ = old
    method.__doc__ = f"Deprecated: use ``{new}``."
    return method


class RenamedMethods:
    """The old names, on both clients."""

    list_model_jobs = _alias("list_model_jobs")
    get_model_job = _alias("get_model_job")
    model_usage = _alias("model_usage")
