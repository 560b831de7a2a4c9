"""``python -m engramdb_bench.reference --port N [--embedder minilm]``: serve the reference on 127.0.0.1."""

from __future__ import annotations

import argparse

import uvicorn

from engramdb.api.keep_alive import KEEP_ALIVE_SECONDS
from engramdb.config import tune_process
from engramdb.core.embedding import make_embedder
from engramdb_bench.reference.app import build
from engramdb_bench.reference.index import ExactIndex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    tune_process()  # the same process settings as engram serve (threads, allocator)
    index = ExactIndex(make_embedder(args.embedder))
    uvicorn.run(
        build(index),
        host="127.0.0.1",
        port=args.port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,  # as engram serve's
    )


if __name__ == "__main__":
    main()
