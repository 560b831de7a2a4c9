"""How the server's and the workers' processes sit on the machine: memory arenas, the interpreter's
turns and priority."""

from __future__ import annotations

import ctypes
import os
import sys

_M_ARENA_MAX = -8  # glibc's mallopt parameter number


def cap_malloc_arenas(arenas: int) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` (0: leave glibc's default); return True if set.

    glibc gives threads arenas of their own, up to eight per core, and an arena keeps its peak:
    under load the server's request threads held ~300 MB more (bench/RESULTS.md). Call it before
    the threads start. Not glibc (or no mallopt): nothing changes.
    """
    if arenas <= 0:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_ARENA_MAX, arenas))
    except (OSError, AttributeError):
        return False


def shorten_interpreter_turns(milliseconds: float) -> None:
    """Let a thread that waits for the interpreter have it after ``milliseconds`` (Python: 5).

    Every SQLite statement and model run lets the interpreter go; a request thread coming back then
    waits out the turn of whichever thread took it. Beside a busy pure-Python thread (the `hashing`
    test embedder) a batch of 100 long episodes held the tenant's writer 3.7-7.4 s instead of 0.8 s,
    and another key's write waited as long (bench/RESULTS.md, session 50).
    """
    sys.setswitchinterval(milliseconds / 1000)


def step_aside(niceness: int, idle: bool) -> None:
    """Make this process background work: recall in the server goes first.

    Niceness still hands a busy process's CPU share out by weight (nice 10: about a tenth);
    SCHED_IDLE (``idle``) gives a CPU only when no other thread wants it. Call it before the
    workers' and the model's threads start: threads started later inherit it, earlier ones not.
    """
    os.nice(niceness)
    if idle and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
