"""Options more than one ``engram bench`` command takes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

EmbedderOpt = Annotated[str, typer.Option("--embedder", help="minilm, minilm-fast or hashing")]
OutOpt = Annotated[Path, typer.Option("--out", help="JSON result file")]
SeedOpt = Annotated[int, typer.Option("--seed", help="corpus and query seed")]
