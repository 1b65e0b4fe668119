"""Sweep overhead: one 200-cell grid of small cells run serially, on the local pool and on a local Ray cluster.

Each backend sweeps the same grid into a fresh folder; the script prints its wall time, the seconds the cells
themselves spent playing (the sum of their ``elapsed_s``), and the overhead per cell: (wall time x workers - cell
time) / cells, the worker time spent on anything but playing (starting processes or the cluster, shipping cells
and records, writing Parquet). Nothing asserts a time; it exits 1 if the backends' tables differ (ignoring the
``_s`` and ``_path`` columns).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pyarrow.parquet as pq

from debatekit.experiments.backends import Mapper, local, ray_cluster
from debatekit.experiments.grid import expand
from debatekit.experiments.sweep import run_sweep
from timing import print_table

# 5 sizes x 2 truths x 4 Bobs x 5 seeds = 200 cells.
GRID = {
    "protocol": "cross-exam",
    "problem": "parity",
    "size": [8, 16, 32, 64, 128],
    "truth": ["yes", "no"],
    "bob": ["honest", "point-random", "point-output", "accept"],
    "seed": [0, 1, 2, 3, 4],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="debates per cell (default 20)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the pool and the cluster (default 2)")
    args = parser.parse_args()
    cells = expand(GRID | {"trials": args.trials})
    root = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    backends: dict[str, tuple[int, Callable[[], AbstractContextManager[Mapper]]]] = {
        "serial": (1, lambda: local(1)),
        f"local pool, {args.workers} workers": (args.workers, lambda: local(args.workers)),
        f"ray, {args.workers} workers": (args.workers, lambda: ray_cluster(None, args.workers, root / "ray")),
    }
    rows = [("backend", "cells", "wall time", "cell time", "overhead per cell")]
    tables = []
    for number, (label, (workers, opened)) in enumerate(backends.items()):
        out = root / str(number)
        started = time.perf_counter()
        with opened() as mapper:
            result = run_sweep(cells, out, mapper)
        wall = time.perf_counter() - started
        playing = sum(r["elapsed_s"] for r in result.results)
        overhead = (wall * workers - playing) / len(cells)
        rows.append((label, str(result.ran), f"{wall:.2f} s", f"{playing:.2f} s", f"{overhead * 1000:.1f} ms"))
        table = pq.read_table(out / "results.parquet")
        tables.append(table.drop_columns([c for c in table.column_names if c.endswith(("_s", "_path"))]))
    print(f"{len(cells)} cells of {args.trials} cross-exam debates each (parity, n = 8 ... 128)")
    print_table(rows)
    if not all(table.equals(tables[0]) for table in tables):
        raise SystemExit("the backends' result tables differ")
    print("identical result tables on every backend")


if __name__ == "__main__":
    main()
