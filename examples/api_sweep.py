"""A sweep through the Python API: every cell of examples/sweep.toml (48 runs of 50 debates) on a
local pool of 2 workers into a temporary folder, run again to show that finished cells are kept,
then the results table (results.parquet) read back with pyarrow.

    python examples/api_sweep.py
"""

import tempfile
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

import debatekit

GRID = Path(__file__).resolve().parent / "sweep.toml"

with tempfile.TemporaryDirectory() as folder:
    first = debatekit.sweep(GRID, out=folder, workers=2)
    again = debatekit.sweep(GRID, out=folder, workers=2)
    print(f"{first.cells} cells: ran {first.ran}, then ran {again.ran} and kept {again.skipped}")
    rows = pq.read_table(first.results_path).to_pylist()
print(f"results.parquet: {len(rows)} rows, {len(rows[0])} columns")

worst = defaultdict(lambda: 1.0)  # the lowest honest win rate over sizes, problems and seeds
for row in rows:
    key = row["protocol"], row["truth"], row["alice"], row["bob"]
    worst[key] = min(worst[key], row["honest_win_rate"])
print(f"{'protocol':<11}{'truth':<6}{'alice':<10}{'bob':<14}lowest honest win rate")
for (protocol, truth, alice, bob), rate in sorted(worst.items()):
    print(f"{protocol:<11}{truth:<6}{alice:<10}{bob:<14}{rate:.2f}")
