"""``engram bench``: the benchmarks, one module each (results as a table and a JSON file).

The harness registers this group for ``engram`` through the entry point ``engramdb.cli``/``bench``.
"""

from __future__ import annotations

import typer

from engramdb_bench.cli.bench_assist import assist
from engramdb_bench.cli.bench_bigscope import bigscope
from engramdb_bench.cli.bench_faults import faults
from engramdb_bench.cli.bench_import import import_turns
from engramdb_bench.cli.bench_langgraph import langgraph
from engramdb_bench.cli.bench_load import load
from engramdb_bench.cli.bench_recall import recall
from engramdb_bench.cli.bench_records import records
from engramdb_bench.cli.bench_scale import scale
from engramdb_bench.cli.bench_slots import slots
from engramdb_bench.cli.bench_versus import versus

bench_app = typer.Typer(help="Benchmarks (results as a table and a JSON file).", no_args_is_help=True)


@bench_app.callback()
def _bench() -> None:
    """Benchmarks (results as a table and a JSON file)."""


bench_app.command("recall")(recall)
bench_app.command("assist")(assist)
bench_app.command("scale")(scale)
bench_app.command("records")(records)
bench_app.command("slots")(slots)
bench_app.command("versus")(versus)
bench_app.command("bigscope")(bigscope)
bench_app.command("load")(load)
bench_app.command("faults")(faults)
bench_app.command("import")(import_turns)
bench_app.command("langgraph")(langgraph)
