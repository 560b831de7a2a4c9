"""Closing a SQLite store while other threads read from it (a server stopping while its jobs and
requests still run): never a crash, and a read after the close fails as one on a closed database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engramdb.errors import BackendUnavailableError, EngramError
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.store import SQLiteStore

# Two threads read in a loop while the main thread closes the file under them, 50 times. Before the
# readers were counted, the sqlite3 module crashed the process (a segfault) in every run of 20 rounds.
RACE = """
import random, sys, threading, time
from pathlib import Path
from engramdb.errors import BackendUnavailableError, EngramError
from engramdb.storage.sqlite.connection import Connections
from engramdb.storage.sqlite.store import SQLiteStore

random.seed(7)
read, refused = 0, 0
for n in range(50):
    db = Connections(Path(sys.argv[1]) / f"race{n}.db")
    with db.write() as conn:
        conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
        conn.executemany("INSERT INTO t (b) VALUES (?)", [(str(i) * 20,) for i in range(2000)])
    stop = threading.Event()

    def reads():
        global read, refused
        while not stop.is_set():
            try:
                db.fetchone("SELECT count(*), max(b) FROM t WHERE b > ?", (str(random.random()),))
                db.fetchall("SELECT a, b FROM t WHERE a > ? LIMIT 50", (random.randrange(2000),))
                read += 1
            except EngramError:
                refused += 1
                time.sleep(0.001)

    threads = [threading.Thread(target=reads) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(random.random() * 0.02)
    db.close()
    time.sleep(0.005)
    stop.set()
    for thread in threads:
        thread.join()
print(read, refused)
"""


def test_reads_racing_a_close_end_in_an_error_never_a_crash(tmp_path: Path) -> None:
    raced = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert raced.returncode == 0, (raced.returncode, raced.stderr[-2000:])  # -11: the process crashed
    read, refused = map(int, raced.stdout.split())
    assert read > 0 and refused > 0  # reads ran before each close, and were refused after it


def _table(tmp_path: Path) -> Connections:
    db = Connections(tmp_path / "t.db")
    with db.write() as conn:
        conn.execute("CREATE TABLE t (a INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    return db


def test_a_read_in_progress_keeps_its_connection_until_it_ends(tmp_path: Path) -> None:
    db = _table(tmp_path)
    with db.reading() as conn:
        closing = threading.Thread(target=db.close)
        closing.start()
        closing.join()
        assert conn.execute("SELECT a FROM t").fetchone() == (1,)  # close() left it to this read
    with pytest.raises(sqlite3.ProgrammingError):  # the read ended: its connection is closed now
        conn.execute("SELECT a FROM t")
    with pytest.raises(EngramError):
        db.fetchone("SELECT a FROM t")
    with pytest.raises(EngramError), db.write() as writer:
        writer.execute("INSERT INTO t VALUES (2)")


def _open_to(path: Path) -> int:
    """How many of this process's file descriptors name ``path``."""
    return sum(1 for fd in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{fd}") == str(path))


def test_a_thread_reading_first_after_the_close_opens_nothing(tmp_path: Path) -> None:
    db = _table(tmp_path)
    path = (tmp_path / "t.db").resolve()
    assert _open_to(path) > 0  # the writer holds the file open until the close
    db.close()
    assert _open_to(path) == 0
    failed: list[BaseException] = []

    def first_read() -> None:
        try:
            db.fetchone("SELECT a FROM t")
        except EngramError as error:
            failed.append(error)

    reader = threading.Thread(target=first_read)
    reader.start()
    reader.join()
    assert len(failed) == 1 and _open_to(path) == 0  # refused, without opening a connection left behind


def test_another_threads_idle_reader_is_closed_with_the_store(tmp_path: Path) -> None:
    db = _table(tmp_path)
    path = (tmp_path / "t.db").resolve()
    reader = threading.Thread(target=db.fetchone, args=("SELECT a FROM t",))
    reader.start()
    reader.join()
    assert _open_to(path) == 2  # the writer and the other thread's reader, idle once its read ended
    db.close()
    assert _open_to(path) == 0


def test_a_closed_store_opens_no_tenant_again(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "home")
    store.tenant("acme", create=True)
    path = (tmp_path / "home" / "tenants" / "acme.sqlite3").resolve()
    assert _open_to(path) > 0  # the control: an open store holds the tenant's file open
    store.close()
    with pytest.raises(BackendUnavailableError):  # a job still running at shutdown asks for it again
        store.tenant("acme")
    assert _open_to(path) == 0
