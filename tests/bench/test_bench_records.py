"""``engram bench records`` runs on the limits a record write has: its load and its bulk import go in
writes of at most 1,000 records, and the import written again changes nothing. No test ran it, so
when a write's limit came down to 1,000 records its 10,000-record import would have been refused."""

from __future__ import annotations

from engramdb.core.knowledge import properties
from engramdb_bench import records_bench


def test_the_records_bench_imports_in_writes_a_write_may_hold() -> None:
    result = records_bench.run(
        ["sqlite"], records=200, queries=3, import_records=2_500, pg_url=None, seed=7, progress=lambda _: None
    )
    [sqlite] = result["results"]
    imported = sqlite["import"]
    assert imported["records"] == 2_500 and imported["writes"] == 3  # more than one write's limit, in three
    assert imported["againCreated"] == 0 and imported["againUnchanged"] == 2_500
    assert records_bench.WRITE_BATCH * (records_bench.TASKS_PER_PROJECT + 1) <= properties.MAX_RECORDS
