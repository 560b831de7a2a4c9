"""The dashboard: server-rendered pages under ``/ui`` over the same operations as every surface.

A page (``/ui/memories``) is a shell with no data; its content comes from a part
(``/ui/part/memories``) that htmx fetches with the key from the tab's session storage as a bearer
header. A part calls the operation registry as the key's caller, so a page shows exactly what
that key may see. Assets are files written here or installed by pip (htmx); nothing is loaded
from the network, and every ``/ui`` answer carries a strict Content-Security-Policy.
"""

from __future__ import annotations

from fastapi import FastAPI

from engramdb.api.ui import (
    admin,
    episodes,
    graph,
    jobs,
    memories,
    memory_actions,
    pages,
    people,
    recall,
    records,
    review,
    timeline,
    usage,
)
from engramdb.api.ui.security import SecurityHeaders

__all__ = ["install_ui"]


def install_ui(app: FastAPI) -> None:
    """Serve the dashboard under ``/ui`` (and redirect ``/`` there)."""
    for module in (
        pages,
        memories,
        recall,
        timeline,
        episodes,
        memory_actions,
        records,
        graph,
        people,
        review,
        usage,
        jobs,
        admin,
    ):
        app.include_router(module.router)
    app.add_middleware(SecurityHeaders)
