"""``engram skills``: the skills EngramDB ships, shown, and installed where a runtime looks for skills."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from engramdb.skills import catalog
from engramdb.skills.install import Installed, install
from engramdb.skills.targets import TARGETS, target

skills_app = typer.Typer(help="Skills that teach agents EngramDB: list, show, install.", no_args_is_help=True)
SAID = {
    "installed": "installed",
    "unchanged": "up to date (nothing written)",
    "updated": "updated (the copy installed earlier was untouched)",
    "kept": "kept: edited since it was installed (--force overwrites it)",
    "replaced": "replaced an edited copy (--force)",
}


@skills_app.command("list")
def list_skills() -> None:
    """The skills, with what each is for."""
    for skill in catalog.shipped():
        print(f"{skill.name}\t{skill.description}")


@skills_app.command("show")
def show(name: Annotated[str, typer.Argument(help="the skill, e.g. engramdb-memory")]) -> None:
    """Print a skill's SKILL.md."""
    print(catalog.load(name).text, end="")


@skills_app.command("install")
def install_skills(
    to: Annotated[str, typer.Option("--target", help=f"the runtime: {', '.join(TARGETS)}")],
    folder: Annotated[str | None, typer.Option("--dir", help="this skills folder instead of the runtime's")] = None,
    project: Annotated[
        bool, typer.Option("--project", help="the project's skills folder (the current directory) instead")
    ] = False,
    names: Annotated[list[str] | None, typer.Option("--skill", help="only this skill (repeat for more)")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite copies edited since they were installed")] = False,
) -> None:
    """Write each skill as FOLDER/<name>/SKILL.md where the runtime finds it; exit 1 if an edited copy was kept."""
    runtime = target(to)
    root = Path(folder) if folder else runtime.project_folder(Path.cwd()) if project else runtime.user_folder()
    done = [install(catalog.load(name), root, force=force) for name in names or catalog.names()]
    for each in done:
        print(_line(each))
    if any(each.outcome == "kept" for each in done):
        raise typer.Exit(1)


def _line(done: Installed) -> str:
    return f"{done.skill}: {SAID[done.outcome]}: {done.path}"
