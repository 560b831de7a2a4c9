"""A reader who follows the pages: a fresh folder, a server, and a terminal whose exports carry over.

The pages say `engram serve` (the README's first command) and `http://127.0.0.1:8377`. Here the test
starts that server itself instead, on the same data folder (``./.engram`` in the reader's folder)
but on a free port, and writes that port wherever a block names 8377; it embeds with the hashing
embedder (``ENGRAM_EMBEDDER=hashing`` for the blocks too), which needs no model. The folder holds a
``.venv`` link to the environment running the tests, as the README's first command would have made.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engramdb.config import Settings
from engramdb.core import auth
from engramdb.core.embedding import HashingEmbedder
from engramdb.storage.sqlite.store import SQLiteStore
from tests.conftest import LiveServer
from tests.docs.blocks import RUNNABLE, Block, missing_output

DOCUMENTED_ADDRESSES = ("127.0.0.1:8377", "localhost:8377")
BLOCK_TIMEOUT = 120  # seconds; a block that runs longer has hung
_SHELL_STATE = {"PWD", "OLDPWD", "SHLVL", "_", "DOCS_ENV_OUT"}


class Reader:
    """Runs blocks in order in ``folder``, against a server started on its data folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        (folder / "home").mkdir()
        settings = Settings(home=folder / ".engram", embedder="hashing", embed_poll_seconds=0.05)
        store = SQLiteStore(settings.home)
        # As `engram serve` does on an empty data folder: the tenant `default` and its first admin key.
        auth.create_key(store, tenant="default", role="admin", grant={}, label="first admin", create_tenant=True)
        self.server = LiveServer(settings, store, HashingEmbedder())
        self.address = self.server.url.removeprefix("http://")
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "VIRTUAL_ENV"}
        self.env = {**inherited, "HOME": str(folder / "home"), "ENGRAM_EMBEDDER": "hashing"}
        self.ran: list[Block] = []

    def __enter__(self) -> Reader:
        self.server.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.stop()
        self.server.store.close()

    def code(self, block: Block) -> str:
        """The block's code as run here: the server's real address for the documented one."""
        code = block.code
        for documented in DOCUMENTED_ADDRESSES:
            code = code.replace(documented, self.address)
        return code

    def run(self, block: Block) -> str:
        """Run ``block``; fail unless it exits 0 and prints what the page shows after it. Returns its output."""
        assert block.runs, f"{block} is not meant to run"
        script = self.folder / f"block-{len(self.ran)}"
        state = self.folder / f"env-{len(self.ran)}"
        if RUNNABLE[block.language] == "bash":
            script.write_text(f'set -eo pipefail\n{self.code(block)}\nenv -0 > "$DOCS_ENV_OUT"\n', encoding="utf-8")
            command = ["bash", str(script)]
        else:
            script.write_text(self.code(block), encoding="utf-8")
            command = [sys.executable, str(script)]
        done = subprocess.run(
            command,
            cwd=self.folder,
            env={**self.env, "DOCS_ENV_OUT": str(state)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=BLOCK_TIMEOUT,
        )
        self.ran.append(block)
        assert done.returncode == 0, f"{block} exited {done.returncode}:\n{block.code}\n--- output:\n{done.stdout}"
        if block.output is not None:
            missing = missing_output(block.output, done.stdout)
            assert missing is None, f"{block} did not print {missing!r}:\n{block.code}\n--- output:\n{done.stdout}"
        if state.exists():  # what the block exported is there for the next one, as in one terminal
            pairs = (item.split("=", 1) for item in state.read_text(encoding="utf-8").split("\0") if "=" in item)
            self.env = {k: v for k, v in pairs if k not in _SHELL_STATE}
        return done.stdout
