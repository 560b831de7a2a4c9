"""Bytecode written once, in the controller, before the workers start.

These machines set PYTHONDONTWRITEBYTECODE, so neither Python nor pytest keeps any bytecode, and in a
fresh clone there is none. Each of the run's hundreds of Python processes then compiled every module
it imported (about a tenth of a second of CPU each), and each of the four workers rewrote every test
module's asserts again (about 6 s of CPU each: bench/RESULTS.md).

A source or helper module edited later is stale by its modification time and size, and Python
compiles it from its source again (as whenever Python keeps bytecode, an edit within the same second
that keeps the size is not seen). A rewritten test module is checked by its source's hash. A checkout
that cannot be written keeps compiling as before, silently.
"""

from __future__ import annotations

import compileall
import fnmatch
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The folders every worker, server and `engram` subprocess of the run imports; the tests' helpers.
SOURCES = (ROOT / "src", ROOT / "bench" / "src")
TESTS = ROOT / "tests"


def write_once(config: pytest.Config) -> None:
    """Compile the sources and the tests' helper modules, then rewrite the run's test modules as
    pytest would (those under the paths it was given, and every conftest)."""
    for folder in SOURCES:
        compileall.compile_dir(folder, quiet=2)
    patterns = config.getini("python_files")
    tests = [p for p in TESTS.rglob("*.py") if p.name == "conftest.py" or _matches(p, patterns)]
    # The helpers are imported as plain modules; the tests and conftests only ever rewritten.
    helpers = "|".join(re.escape(str(p)) for p in tests)
    compileall.compile_dir(TESTS, quiet=2, rx=re.compile(f"^({helpers})$") if helpers else None)
    given = [(Path(config.invocation_params.dir) / arg.split("::")[0]).resolve() for arg in config.args]
    _rewrite(config, [p for p in tests if p.name == "conftest.py" or any(p.is_relative_to(g) for g in given)])


def _matches(path: Path, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)


def _rewrite(config: pytest.Config, tests: list[Path]) -> None:
    """Write pytest's rewritten code of each test module where its import hook looks first (through
    its own functions, which are private: where a pytest lacks them, the workers rewrite as before).

    A module whose rewriting fails or warns (an assert that is always true) is left to the worker
    that imports it, which reports it as it always did. So is every module when the assertion-pass
    hook is on: a cached module would not know it was asked for.
    """
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
    if state is None or config.getini("enable_assertion_pass_hook"):  # --assert=plain, or the hook
        return
    for path in tests:
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc) is not None:
            continue
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            try:
                cache.mkdir(parents=True, exist_ok=True)
                source_hash, code = _rewrite_test(path, config)
            except (OSError, SyntaxError, ValueError):  # ValueError: a NUL byte in the source
                continue
        if not heard:
            _write_pyc(state, code, source_hash, pyc)
