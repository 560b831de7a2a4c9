"""Options more than one ``engram bench`` command takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

EmbedderOpt = Annotated[str, typer.Option("--embedder", help="minilm, minilm-fast or hashing")]
OutOpt = Annotated[Path, typer.Option("--out", help="JSON result file")]
SeedOpt = Annotated[int, typer.Option("--seed", help="corpus and query seed")]
# The arms that serve a new data folder: `auto` is what such a folder gets (core/embedder_choice.py).
ServedEmbedderOpt = Annotated[
    str,
    typer.Option(
        "--embedder",
        help="EngramDB's: auto (a new data folder's default: minilm-fast on an x86 CPU with AVX2 or VNNI), "
        "minilm (Mem0's model), minilm-fast or hashing",
    ),
]
ReferenceEmbedderOpt = Annotated[
    str | None, typer.Option("--reference-embedder", help="the reference arm's embedder (default: EngramDB's)")
]


def served_embedders(embedder: str, reference: str | None) -> tuple[str, str]:
    """EngramDB's embedder spec (``auto`` as a new data folder resolves it) and the reference's."""
    from engramdb.core.embedder_choice import resolve_spec

    served = resolve_spec(embedder, None)
    return served, resolve_spec(reference, None) if reference else served
