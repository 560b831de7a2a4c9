"""``engram bench faults``: the kill -9 loop and the SDK host killed while the server flaps
(engramdb_bench.faults; tests/faults runs a short version of both in the suite)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

_out = Console()
_err = Console(stderr=True, soft_wrap=True)


def faults(
    kills: Annotated[int, typer.Option(min=1, help="SIGKILLs of the server mid-write")] = 100,
    turns: Annotated[int, typer.Option(min=0, help="turns the SDK host writes, the server flapping (0: skip)")] = 3000,
    host_kills: Annotated[int, typer.Option(min=1, help="SIGKILLs of the SDK host mid-stream")] = 10,
    database_url: Annotated[
        str | None,
        typer.Option("--database-url", help="run the kill loop on this PostgreSQL database instead of SQLite"),
    ] = None,
    pg_schema: Annotated[str, typer.Option(help="the schema the kill loop creates and uses there")] = "engram_faults",
    synchronous: Annotated[str, typer.Option(help="the server's ENGRAM_SQLITE_SYNCHRONOUS")] = "NORMAL",
    folder: Annotated[Path | None, typer.Option(help="keep data and logs here (default: a temporary folder)")] = None,
    out: Annotated[Path, typer.Option("--out", help="JSON result file")] = Path("bench/out/faults.json"),
    seed: Annotated[int, typer.Option("--seed", help="seed of the kill timing")] = 7,
) -> None:
    """Kill a real server with SIGKILL mid-write again and again, and an SDK host mid-stream while the
    server flaps; count acknowledged writes, lost ones and duplicates (exit 1 if any is wrong)."""
    from engramdb_bench.faults import kill_loop, sdk_flap

    def progress(line: str) -> None:
        _err.print(line, highlight=False)

    with tempfile.TemporaryDirectory(prefix="engram-faults-") as temporary:
        root = folder or Path(temporary)
        config = kill_loop.KillLoopConfig(
            kills=kills, database_url=database_url, pg_schema=pg_schema, sqlite_synchronous=synchronous, seed=seed
        )
        progress(f"kill loop: {kills} SIGKILLs ({'PostgreSQL' if database_url else 'SQLite'})")
        result: dict[str, Any] = {"killLoop": kill_loop.run(config, root / "kill-loop", progress).result}
        if turns:
            progress(f"SDK host: {turns} turns, {host_kills} host kills, the server flapping")
            flap = sdk_flap.FlapConfig(turns=turns, host_kills=host_kills, seed=seed)
            result["sdkFlap"] = sdk_flap.run(flap, root / "sdk-flap", progress).result
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    _out.print(_table(result))
    _out.print(f"JSON written to {out}", highlight=False)
    if not all(part["ok"] for part in result.values()):
        raise typer.Exit(1)


def _table(result: dict[str, Any]) -> Table:
    table = Table(
        "run",
        "kills",
        "acknowledged",
        "cut off mid-request",
        "stored, answer lost",
        "lost",
        "duplicates",
        "audit",
        "ok",
        title="fault runs",
    )
    loop = result["killLoop"]
    table.add_row(
        f"kill -9 loop ({loop['backend']})",
        str(loop["kills"]),
        str(sum(loop["acknowledged"].values())),
        str(loop["interruptedRequests"]),
        str(loop["ackLostButStored"]),
        str(loop["lost"]),
        str(loop["duplicates"]),
        "verified" if loop["audit"].get("verified") else "BROKEN",
        str(loop["ok"]),
    )
    if "sdkFlap" in result:
        flap = result["sdkFlap"]
        table.add_row(
            f"SDK host ({flap['serverStops']} server stops)",
            str(flap["hostKills"]),
            str(flap["turns"]),
            "-",
            "-",
            str(flap["lost"]),
            str(flap["duplicates"]),
            "-",
            str(flap["ok"]),
        )
    return table
