"""The controller's bytecode (tests/bytecode.py): each test module rewritten once, as pytest's import
hook would, and found there by it; the workers rewrite nothing again."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

from tests import bytecode


def test_a_test_module_is_rewritten_where_pytests_hook_reads_it(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text("def test_x():\n    x = 1\n    assert x == 2\n")
    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_x(:\n")
    pyc = get_cache_dir(module) / (module.name[:-3] + PYC_TAIL)
    assert _read_pyc(module, pyc) is None  # control: nothing there before

    bytecode._rewrite(pytestconfig, [module, broken])

    code = _read_pyc(module, pyc)
    assert code is not None  # pytest's own reader takes it
    test_x = next(c for c in code.co_consts if getattr(c, "co_name", None) == "test_x")
    assert any(name.startswith("@py_assert") for name in test_x.co_varnames)  # the asserts rewritten
    assert not (get_cache_dir(broken) / (broken.name[:-3] + PYC_TAIL)).exists()  # left to the worker to report
    module.write_text("def test_x():\n    assert True is not False\n")
    assert _read_pyc(module, pyc) is None  # an edited module is stale: rewritten again on import
