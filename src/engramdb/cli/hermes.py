"""``engram hermes``: EngramDB as Hermes Agent's memory provider (``engramdb.integrations.hermes``)."""

from __future__ import annotations

from typing import Annotated

import typer

hermes_app = typer.Typer(help="Hermes Agent: install EngramDB as its memory provider.", no_args_is_help=True)


@hermes_app.command("install")
def install(
    hermes_home: Annotated[str | None, typer.Option("--hermes-home", help="default: HERMES_HOME or ~/.hermes")] = None,
    url: Annotated[str | None, typer.Option("--url", help="EngramDB server URL for the provider's config")] = None,
    agent_id: Annotated[str | None, typer.Option("--agent-id", help="agentId of the memory scope")] = None,
) -> None:
    """Write $HERMES_HOME/plugins/engramdb/ (and the provider's config), then say how to select it."""
    from engramdb.integrations.hermes.config import write_config
    from engramdb.integrations.hermes.install import hermes_home as home_of
    from engramdb.integrations.hermes.install import install as write_plugin

    folder = write_plugin(hermes_home)
    values = {k: v for k, v in (("url", url), ("agent_id", agent_id)) if v}
    if values:
        write_config(home_of(hermes_home), values)
    print(f"installed {folder}")
    print(
        "select it: set `memory: {provider: engramdb}` in config.yaml (or run `hermes memory setup`), "
        "and put the host key in ENGRAM_KEY (Hermes' .env)"
    )
