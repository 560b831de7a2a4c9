"""How `engram serve` sits on the machine: glibc's malloc arenas capped before its threads start."""

from __future__ import annotations

import subprocess
import sys

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
