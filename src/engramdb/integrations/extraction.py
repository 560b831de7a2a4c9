"""Model-assisted extraction (facts drawn from a conversation by a model): its one call point.

This version has no extraction: it is built separately (issue 17, ``infer=True``). Every
integration that would extract (``Memory.add(..., infer=True)``, Hermes' ``on_session_end``)
calls ``extract_facts`` and nothing else, so wiring it later changes this module alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engramdb.errors import UnavailableError

NOT_AVAILABLE = (
    "model-assisted extraction (infer=True) is not available in this version of EngramDB; nothing was "
    "stored. Store the turns as episodes with infer=False, or state facts yourself (Memory.remember)"
)


def extract_facts(messages: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Return the facts a model finds in ``messages`` (write bodies), or raise UnavailableError."""
    raise UnavailableError(NOT_AVAILABLE, field="infer", messages=len(messages))
