"""``engram outbox``: a host's durable outbox, seen and repaired from the command line.

The outbox is the SDK's (``MemorySession``, the integrations): a folder on the agent's machine.
These commands read and change that folder only; ``deliver`` sends what is pending to a server.
"""

from __future__ import annotations

from typing import Annotated

import typer

from engramdb.sdk.outbox import __main__ as outbox_cli

outbox_app = typer.Typer(help="A host's outbox: pending writes, dead letters, replay.", no_args_is_help=True)
Profile = Annotated[str, typer.Option("--profile", help="the profile folder holding outbox.sqlite3")]
Json = Annotated[bool, typer.Option("--json", help="one JSON object per line")]


def _exit(code: int) -> None:
    if code:
        raise typer.Exit(code)


@outbox_app.command("list")
def list_pending(profile: Profile, as_json: Json = False) -> None:
    """Writes queued on disk, not yet taken by the server."""
    _exit(outbox_cli.main(["list", "--profile", profile, *(["--json"] if as_json else [])]))


@outbox_app.command("dead")
def list_dead(profile: Profile, as_json: Json = False) -> None:
    """Writes the server refused (a wrong key, an invalid body), with the server's reason."""
    _exit(outbox_cli.main(["list", "--dead", "--profile", profile, *(["--json"] if as_json else [])]))


@outbox_app.command("replay")
def replay(
    profile: Profile, seq: Annotated[list[int] | None, typer.Argument(help="dead letters (default: all)")] = None
) -> None:
    """Queue dead letters again (after fixing the key, say); the next session or `deliver` sends them."""
    _exit(outbox_cli.main(["replay", "--profile", profile, *(str(s) for s in seq or [])]))


@outbox_app.command("deliver")
def deliver(
    profile: Profile,
    url: Annotated[str, typer.Option("--url", envvar="ENGRAM_URL", help="EngramDB base URL")],
    timeout: Annotated[float, typer.Option("--timeout", help="seconds to try")] = 10.0,
) -> None:
    """Send what is pending now, as the key in ENGRAM_KEY; exit 1 if some is left."""
    _exit(outbox_cli.main(["deliver", "--profile", profile, "--url", url, "--timeout", str(timeout)]))
