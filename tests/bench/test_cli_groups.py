"""`engram bench` and `engram eval` come from the harness through its entry points: installed, they
are the harness's commands; missing or broken, the names still answer, say how to install the
harness and exit with status 2."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from typer.testing import CliRunner

from engramdb.cli import extras
from engramdb.cli.main import app, build

INSTALL_HINT = "pip install 'engramdb[bench]' from a clone of the repository, or pip install -e ./bench"


def test_the_harness_registers_bench_and_eval_for_engram() -> None:
    points = {p.name: p.value for p in entry_points(group=extras.GROUP)}
    assert points["bench"] == "engramdb_bench.cli.bench:bench_app"
    assert points["eval"] == "engramdb_bench.cli.evaluate:eval_app"


def test_installed_the_groups_are_the_harness_commands() -> None:
    bench = CliRunner().invoke(app, ["bench", "--help"])
    assert bench.exit_code == 0, bench.output
    for command in ("recall", "assist", "scale", "records", "versus", "bigscope", "load", "faults", "langgraph"):
        assert command in bench.output, command
    versus = CliRunner().invoke(app, ["bench", "versus", "--help"])
    assert versus.exit_code == 0 and "--mem0-python" in versus.output
    evaluate = CliRunner().invoke(app, ["eval", "--help"])
    assert evaluate.exit_code == 0 and "locomo" in evaluate.output and "longmemeval" in evaluate.output


def test_missing_each_name_says_how_to_install_the_harness() -> None:
    bare = build(extra_groups=[])
    listing = CliRunner().invoke(bare, ["--help"])
    assert listing.exit_code == 0 and "bench" in listing.output and "eval" in listing.output
    assert "'engramdb[bench]'" in listing.output  # the hint in the command list, not eaten as markup
    for args in (["bench"], ["bench", "versus", "--help"], ["eval", "locomo", "--data", "locomo10.json"]):
        done = CliRunner().invoke(bare, args)
        assert done.exit_code == 2, (args, done.output)
        assert "needs the benchmark harness (engramdb-bench), which is not installed" in done.output, args
        assert INSTALL_HINT in done.output, args
        assert "Usage" not in done.output, args  # the message, not a help page
    # Control: the same words with the harness installed run its commands.
    assert CliRunner().invoke(app, ["bench", "versus", "--help"]).exit_code == 0


def test_a_broken_install_is_reported_by_its_name_alone() -> None:
    broken = EntryPoint(name="bench", value="engramdb_bench.no_such_module:bench_app", group=extras.GROUP)
    wrong = EntryPoint(name="eval", value="engramdb_bench.cli.evaluate:_finite", group=extras.GROUP)
    cli = build(extra_groups=[broken, wrong])
    bench = CliRunner().invoke(cli, ["bench", "recall"])
    assert bench.exit_code == 2
    assert "engram bench is installed but does not load" in bench.output
    assert "ModuleNotFoundError" in bench.output and INSTALL_HINT in bench.output
    evaluate = CliRunner().invoke(cli, ["eval", "locomo"])
    assert evaluate.exit_code == 2 and "is a function, not a typer.Typer" in evaluate.output
    # The rest of the command line is unharmed.
    assert CliRunner().invoke(cli, ["keys", "--help"]).exit_code == 0


def test_another_distributions_group_is_added_by_its_name() -> None:
    other = EntryPoint(name="evaluate", value="engramdb_bench.cli.evaluate:eval_app", group=extras.GROUP)
    cli = build(extra_groups=[other])
    done = CliRunner().invoke(cli, ["evaluate", "--help"])
    assert done.exit_code == 0 and "locomo" in done.output
    broken = build(extra_groups=[EntryPoint(name="plugin", value="no_such_plugin:app", group=extras.GROUP)])
    failed = CliRunner().invoke(broken, ["plugin", "run"])
    assert failed.exit_code == 2 and "engram plugin is installed but does not load" in failed.output
    assert INSTALL_HINT not in failed.output  # the harness's advice is for the harness's groups only
    # Control: the harness's own names, absent here, still answer with the advice.
    missing = CliRunner().invoke(broken, ["bench"])
    assert missing.exit_code == 2 and INSTALL_HINT in missing.output
