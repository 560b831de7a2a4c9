"""A PostgreSQL store's pool growing while a hypothesis test draws an example: the global random state
stays as it was (tests/conftest.py gives psycopg_pool a generator of its own)."""

from __future__ import annotations

import random
import threading

import psycopg_pool.base
import pytest

from engramdb.storage.postgres.store import PostgresStore

pytestmark = pytest.mark.postgres


def _grow(store: PostgresStore) -> None:
    """Hold three connections at once, so the pool opens two more than its first."""
    held, release = threading.Barrier(4), threading.Event()

    def hold() -> None:
        with store.connection("t1"):
            held.wait()
            release.wait()

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for thread in threads:
        thread.start()
    held.wait()
    release.set()
    for thread in threads:
        thread.join()


@pytest.mark.parametrize("pools_own", [True, False])
def test_a_growing_pool_leaves_the_global_random_state_alone(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, pools_own: bool
) -> None:
    if not pools_own:  # the control: with the global generator the pool's growth changes the state
        monkeypatch.setattr(psycopg_pool.base, "random", random.random)
    store = PostgresStore(pg_url, schema=f"t_pool_{pools_own:d}", max_connections=4)
    try:
        before = random.getstate()
        _grow(store)
        assert (random.getstate() == before) is pools_own
    finally:
        store.close()
