"""docs/cli.md, written from the ``engram`` application: every command, with what it does."""

from __future__ import annotations

from typing import Any

import typer

INTRO = """# The `engram` command

Generated from the application in `src/engramdb/cli/main.py` by `python -m
engramdb.devtools.generate`; a test fails when it is stale. `engram COMMAND --help` gives every
option of a command.

Every operation of the server is a command, and each runs either **on the data folder** directly,
as the machine's operator (no key: `--home` or `ENGRAM_HOME`, default `./.engram`; `--tenant`,
default `default`), or **against a running server** with `--url` (or `ENGRAM_URL`) and `--key`
(or `ENGRAM_KEY`), as that key. With `ENGRAM_URL` set, a command asks the server instead of the
data folder. Run the data-folder commands with the same `ENGRAM_HOME` (or from the same folder)
as the server they should act on.

- Output is a table or a line for people; `--json` prints the answer as JSON, for scripts.
- Options are the operation's wire fields in kebab case ([api.md](api.md) lists them); `--body`
  takes a whole JSON body (text, `@file`, or `-` for stdin) and options override its fields.
- The scope flags are `--agent-id`, `--profile-id`, `--privacy`, `--participant` and
  `--sandbox-eligible`. On the data folder they default to agent `cli`, profile `default` and this
  machine's user, a scope of its own: a key bound to another scope does not see these memories,
  and the reverse. Against a server, name the fields your key does not fix (an `agent` key fixes
  all five; a `host` key fixes its agent and profile: [concepts.md](concepts.md#tenants-keys-and-scope)).
- A fact's, episode's, tombstone's, review item's or model job's id may be given by a unique prefix
  of what its listing shows (`engram review approve 3f2a`).
- An error is one line on stderr, naming the option to fix when one is wrong, and the exit status is
  not 0.

`engram bench …` and `engram eval …` come from the benchmark harness (engramdb-bench, the `bench`
extra; the `test` extra includes it): [benchmarks.md](benchmarks.md) lists them.
"""


def cli_reference() -> str:
    """docs/cli.md: a table of the top-level commands, then one per group."""
    from engramdb.cli import extras
    from engramdb.cli.main import build

    # engramdb's own commands, whatever else is installed: the harness's groups are documented beside it.
    root = typer.main.get_command(build(extra_groups=[]))
    children = [(name, cmd) for name, cmd in _children(root) if name not in extras.EXPECTED]
    groups = {name: cmd for name, cmd in children if hasattr(cmd, "commands")}
    singles = [(name, cmd) for name, cmd in children if name not in groups]
    lines = [INTRO, "## Commands", "", *_table([(f"engram {name}", cmd) for name, cmd in singles])]
    for name, group in groups.items():
        lines += ["", f"## `engram {name}`", "", _summary(group), ""]
        lines += _table([(f"engram {name} {sub}", cmd) for sub, cmd in _children(group)])
    return "\n".join(lines) + "\n"


def _children(group: Any) -> list[tuple[str, Any]]:
    return [(name, cmd) for name, cmd in group.commands.items() if not cmd.hidden]


def _table(commands: list[tuple[str, Any]]) -> list[str]:
    rows = ["| command | what it does |", "|---|---|"]
    return rows + [f"| `{path}` | {_summary(cmd)} |" for path, cmd in commands]


def _summary(cmd: Any) -> str:
    """The first paragraph of a command's help, on one line."""
    first = (cmd.help or "").split("\n\n")[0]
    if not first.strip():
        raise SystemExit(f"command {cmd.name} has no help: give it a docstring")
    return " ".join(first.split()).replace("|", "\\|")
