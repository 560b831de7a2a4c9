"""Command groups that other distributions add to ``engram``, through the entry-point group
``engramdb.cli`` (``[project.entry-points."engramdb.cli"]``: name = "module:typer_app").

The harness (engramdb-bench, this repository's ``bench/`` folder, installed by the ``bench`` extra)
registers ``bench`` and ``eval``. They are found by their entry points, never imported by name:
nothing in engramdb depends on the harness. When one is missing, or installed but failing to load,
its name still answers: it says why and how to install it, and exits with status 2.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

log = logging.getLogger(__name__)

GROUP = "engramdb.cli"
INSTALL = "pip install 'engramdb[bench]' from a clone of the repository, or pip install -e ./bench"
EXPECTED = {
    "bench": "Benchmarks (results as a table and a JSON file).",
    "eval": "Retrieval quality on LoCoMo and LongMemEval (tables and a JSON file).",
}
_err = Console(stderr=True, soft_wrap=True)


def installed() -> list[EntryPoint]:
    """Return the command groups installed distributions register for ``engram``."""
    return list(entry_points(group=GROUP))


def add_groups(app: typer.Typer, points: Iterable[EntryPoint]) -> None:
    """Add each group of ``points`` to ``app``, and a stand-in for each expected group that is missing."""
    added = set()
    for point in points:
        group, problem = _load(point)
        if group is None:
            _add_stand_in(app, point.name, f"engram {point.name} is installed but does not load ({problem})")
        else:
            app.add_typer(group, name=point.name)
        added.add(point.name)
    for name in [n for n in EXPECTED if n not in added]:
        _add_stand_in(app, name, f"engram {name} needs the benchmark harness (engramdb-bench), which is not installed")


def _load(point: EntryPoint) -> tuple[typer.Typer | None, str]:
    try:
        loaded = point.load()
    except (ImportError, AttributeError) as error:  # a broken install must not take the whole CLI down
        log.debug("entry point %s = %s does not load", point.name, point.value, exc_info=True)
        return None, f"{point.value}: {type(error).__name__}: {error}"
    if not isinstance(loaded, typer.Typer):
        return None, f"{point.value} is a {type(loaded).__name__}, not a typer.Typer"
    return loaded, ""


def _add_stand_in(app: typer.Typer, name: str, problem: str) -> None:
    # Only the harness's own groups know how they are installed.
    advice = f" Install it: {INSTALL}" if name in EXPECTED else ""
    summary = EXPECTED.get(name, f"The {name} commands.")

    # Every argument and option is accepted (--help too): `engram bench versus --help` gets the message.
    @app.command(
        name,
        help=f"{summary} Not available here.{escape(advice)}",  # the help is rich markup: [bench] is a tag
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    )
    def _stand_in() -> None:
        _err.print(Text.assemble(("error:", "red"), f" {problem}.{advice}"), highlight=False)
        raise typer.Exit(2)
