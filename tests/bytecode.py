"""Bytecode written once, in the controller, before the workers start.

These machines set PYTHONDONTWRITEBYTECODE, so neither Python nor pytest keeps any bytecode, and in a
fresh clone there is none. Each of the run's hundreds of Python processes then compiled every module
it imported (about a tenth of a second of CPU each), and each of the four workers rewrote every test
module's asserts again (about 6 s of CPU each: bench/RESULTS.md). A module edited later is stale and
compiled from its source again, as whenever Python keeps bytecode. A checkout that cannot be written
keeps compiling as before, silently.
"""

from __future__ import annotations

import compileall
import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The folders every worker, server and `engram` subprocess of the run imports; the tests' helpers.
SOURCES = (ROOT / "src", ROOT / "bench" / "src")
TESTS = ROOT / "tests"


def write_once(config: pytest.Config) -> None:
    """Compile the sources and the tests' helper modules, then rewrite the test modules as pytest would."""
    for folder in SOURCES:
        compileall.compile_dir(folder, quiet=2)
    patterns = [*config.getini("python_files"), "conftest.py"]
    tests = [p for p in TESTS.rglob("*.py") if any(fnmatch.fnmatch(p.name, pat) for pat in patterns)]
    # The helpers are imported as plain modules; the tests and conftests only ever rewritten.
    helpers = "|".join(re.escape(str(p)) for p in tests)
    compileall.compile_dir(TESTS, quiet=2, rx=re.compile(f"^({helpers})$") if helpers else None)
    _rewrite(config, tests)


def _rewrite(config: pytest.Config, tests: list[Path]) -> None:
    """Write pytest's rewritten code of each test module where its import hook looks first (through
    its own functions, which are private: where a pytest lacks them, the workers rewrite as before)."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:  # asserts are not rewritten in this run (--assert=plain)
        return
    for path in tests:
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc) is not None:
            continue
        try:
            cache.mkdir(parents=True, exist_ok=True)
            source_hash, code = _rewrite_test(path, config)
        except (OSError, SyntaxError):  # the worker that imports it reports it as it would
            continue
        _write_pyc(state, code, source_hash, pyc)
