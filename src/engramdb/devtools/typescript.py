"""The TypeScript client's types, generated from the server's own OpenAPI document.

    python -m engramdb.devtools.typescript          # rewrite clients/typescript/packages/client/src/schema.ts
    python -m engramdb.devtools.typescript --check  # exit 1 when it is stale

The document is the one the app serves at /openapi.json (built here on a throwaway home with the
hashing embedder: no model, no network); ``openapi-typescript`` from the workspace turns it into types.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from engramdb.api.rest import create_app
from engramdb.config import Settings
from engramdb.devtools.node import WORKSPACE, ensure_workspace, node

SCHEMA = WORKSPACE / "packages" / "client" / "src" / "schema.ts"
GENERATOR = WORKSPACE / "node_modules" / "openapi-typescript" / "bin" / "cli.js"


def openapi_document() -> str:
    """The server's OpenAPI document, as JSON text with sorted keys."""
    with tempfile.TemporaryDirectory() as home:
        app = create_app(Settings(home=Path(home), embedder="hashing"), run_worker=False)
        return json.dumps(app.openapi(), sort_keys=True, indent=1)


def generated_schema() -> str:
    """What ``schema.ts`` should hold: openapi-typescript's output for the server's document."""
    ensure_workspace()
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "openapi.json", Path(folder) / "schema.ts"
        source.write_text(openapi_document(), encoding="utf-8")
        done = node(str(GENERATOR), str(source), "-o", str(target), "--default-non-nullable=false")
        if done.returncode != 0:
            raise RuntimeError(f"openapi-typescript failed: {done.stderr}")
        return target.read_text(encoding="utf-8")


def main(argv: list[str]) -> int:
    text = generated_schema()
    if "--check" in argv:
        if not SCHEMA.exists() or SCHEMA.read_text(encoding="utf-8") != text:
            print(f"stale: {SCHEMA.relative_to(WORKSPACE.parents[1])} (run python -m engramdb.devtools.typescript)")
            return 1
        return 0
    SCHEMA.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
