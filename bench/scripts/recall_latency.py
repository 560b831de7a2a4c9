"""Recall latency benchmark; the same as ``engram bench recall`` (see bench/README.md).

python bench/scripts/recall_latency.py --sizes 1000,10000 --queries 200
"""

from __future__ import annotations

import sys

from engramdb_bench.cli.bench import bench_app

if __name__ == "__main__":
    bench_app(["recall", *sys.argv[1:]], prog_name="recall_latency.py")
