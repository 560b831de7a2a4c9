"""The controller's bytecode (tests/bytecode.py): each test module rewritten once, as pytest's import
hook would, and found there by it; the workers rewrite nothing again."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

from tests import bytecode


def _pyc(module: Path) -> Path:
    return get_cache_dir(module) / (module.name[:-3] + PYC_TAIL)


def _keeps(config: pytest.Config) -> bool:
    """Whether this run keeps rewritten modules: not under --assert=plain, nor with the assertion-pass hook."""
    return config.getoption("assertmode") != "plain" and not config.getini("enable_assertion_pass_hook")


def test_the_run_found_this_module_rewritten_before_it_started(pytestconfig: pytest.Config) -> None:
    found = _read_pyc(Path(__file__), _pyc(Path(__file__))) is not None  # written by write_once, still valid
    assert found or not _keeps(pytestconfig)


def test_a_test_module_is_rewritten_where_pytests_hook_reads_it(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text("def test_x():\n    x = 1\n    assert x == 2\n")
    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_x(:\n")
    warns = tmp_path / "test_warns.py"
    warns.write_text("def test_x():\n    assert (1 == 2, 'never checked')\n")
    assert _read_pyc(module, _pyc(module)) is None  # control: nothing there before

    bytecode._rewrite(pytestconfig, [module, broken, warns])

    code = _read_pyc(module, _pyc(module))
    if not _keeps(pytestconfig):
        assert code is None  # a run that keeps nothing writes nothing
        return
    assert code is not None  # pytest's own reader takes it
    test_x = next(c for c in code.co_consts if getattr(c, "co_name", None) == "test_x")
    assert any(name.startswith("@py_assert") for name in test_x.co_varnames)  # the asserts rewritten
    # Left to the worker that imports them, to report as it always did: a syntax error, a warning.
    assert not _pyc(broken).exists() and not _pyc(warns).exists()
    module.write_text("def test_x():\n    x = 20\n    assert x == 20\n")  # another size: stale whatever the clock says
    assert _read_pyc(module, _pyc(module)) is None  # an edited module is stale: rewritten again on import
