"""How `engram serve` sits on the machine: glibc's malloc arenas capped before its threads start, and
the interpreter handed over sooner than Python's default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Starts threads that each allocate while the others hold their memory, then counts glibc's arenas
# (malloc_info writes one <heap> element per arena).
_COUNT_ARENAS = r"""
import ctypes, sys, tempfile, threading
from engramdb.cli.process import cap_malloc_arenas
print(cap_malloc_arenas(int(sys.argv[1])))
barrier = threading.Barrier(16)
def grab():
    kept = [bytearray(4096) for _ in range(256)]
    barrier.wait()
threads = [threading.Thread(target=grab) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL("libc.so.6")
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    stream = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(stream))
    libc.fclose(ctypes.c_void_p(stream))
    print(open(out.name).read().count("<heap nr="))
"""


def _arenas(cap: int) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", _COUNT_ARENAS, str(cap)], capture_output=True, text=True, check=True)
    applied, heaps = done.stdout.split()
    return applied, int(heaps)


def test_malloc_arenas_are_capped_for_threads_started_after() -> None:
    applied, capped = _arenas(2)
    assert applied == "True" and 1 <= capped <= 2
    untouched, default = _arenas(0)  # the positive control: without the cap, threads get arenas of their own
    assert untouched == "False" and default > 2


# What `engram serve` does to its process before its threads start, with the settings of the
# environment given (its own function, called by serve: the server itself runs until stopped).
_SETTLE = r"""
import sys
from engramdb.cli.operator import settle_process
from engramdb.config import Settings
print(sys.getswitchinterval())
settle_process(Settings())
print(sys.getswitchinterval())
"""


def _intervals(**env: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", _SETTLE], capture_output=True, text=True, check=True, env=os.environ | env
    )
    return [float(line) for line in done.stdout.split()]


def test_the_server_hands_the_interpreter_over_every_half_millisecond() -> None:
    before, after = _intervals()
    assert before == 0.005 and after == 0.0005  # Python's own default, then the server's
    assert _intervals(ENGRAM_GIL_SWITCH_MS="2") == [0.005, 0.002]  # the setting decides
    refused = subprocess.run(
        [sys.executable, "-c", _SETTLE], capture_output=True, text=True, env=os.environ | {"ENGRAM_GIL_SWITCH_MS": "0"}
    )
    assert refused.returncode != 0 and "gil_switch_ms" in refused.stderr  # no turn at all is no setting


# `engram serve` as its command runs, up to the point where uvicorn would take over: uvicorn.run is
# replaced by one that prints the process's turn and returns.
_SERVE = r"""
import sys
import uvicorn
uvicorn.run = lambda app, **options: print(sys.getswitchinterval())
from engramdb.cli.entry import main
main(["serve", "--home", sys.argv[1], "--port", "9"])
"""


def test_engram_serve_sets_the_turn_before_it_serves(tmp_path: Path) -> None:
    def served(**env: str) -> float:
        done = subprocess.run(
            [sys.executable, "-c", _SERVE, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"ENGRAM_EMBEDDER": "hashing"} | env,
        )
        return float(done.stdout.split()[-1])

    assert served() == 0.0005
    assert served(ENGRAM_GIL_SWITCH_MS="5") == 0.005  # the control: the setting reaches serve
