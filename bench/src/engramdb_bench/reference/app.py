"""The reference's HTTP surface: ``POST /add``, ``POST /search``, ``GET /healthz``; JSON in and out."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engramdb_bench.reference.index import ExactIndex


def build(index: ExactIndex) -> Starlette:
    """The app over ``index``. The handlers run on the event loop itself: no thread hop, one client."""

    async def add(request: Request) -> Response:
        body = json.loads(await request.body())
        items = body["items"]
        added = index.add(body["scope"], [i["id"] for i in items], [i["text"] for i in items])
        return JSONResponse({"added": added})

    async def search(request: Request) -> Response:
        body = json.loads(await request.body())
        found = index.search(body["scope"], body["query"], int(body.get("limit", 10)))
        return JSONResponse({"ids": [i for i, _ in found], "scores": [s for _, s in found]})

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    routes = [
        Route("/add", add, methods=["POST"]),
        Route("/search", search, methods=["POST"]),
        Route("/healthz", health, methods=["GET"]),
    ]
    return Starlette(routes=routes)
