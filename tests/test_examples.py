"""The scripts in examples/ (issue 13, point 5) run as a user runs them, from another directory,
and print what they claim: each is checked for the numbers it reports, not only its exit status."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str, cwd: Path) -> str:
    """``python examples/NAME.py`` run in ``cwd``: its stdout (it must exit 0 and leave nothing behind)."""
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert list(cwd.iterdir()) == [], "an example wrote into the directory it was run from"
    return done.stdout


def numbers(pattern: str, text: str) -> list[tuple[str, ...]]:
    found = re.findall(pattern, text)
    assert found, f"{pattern!r} not in:\n{text}"
    return found


def test_api_run(tmp_path: Path) -> None:
    out = example("api_run.py", tmp_path)
    assert "cross-exam on majority (size 1024" in out and "vs bob point-random, 200 debates" in out
    [(win, accept, low, high, completeness)] = numbers(
        r"honest win rate ([\d.]+), accept rate ([\d.]+) \[([\d.]+), ([\d.]+)\] \(theorem: completeness >= ([\d.]+)\)",
        out,
    )
    assert float(win) == float(accept) == float(completeness) == 1.0
    assert float(low) < 1.0 == float(high)
    [(queries, query_bound)] = numbers(r"verifier queries \(max\) (\d+) \(theorem: <= (\d+)\)", out)
    assert int(queries) <= int(query_bound)
    [(bits, bound, size, T)] = numbers(
        r"bits read \(max\) (\d+) \(theorem: <= (\d+)\) of (\d+) input bits and (\d+)", out
    )
    assert 0 < int(bits) <= int(bound) < int(size) < int(T)  # a verifier that reads a sliver of it all


def test_api_exact(tmp_path: Path) -> None:
    out = example("api_exact.py", tmp_path)
    [(value, guarantee)] = numbers(r"wins with probability ([\d.]+) against the best bob .*theorem: >= ([\d.]+)", out)
    assert float(guarantee) <= float(value) < 1.0
    rows = numbers(r"bob ([\w-]+): honest win rate ([\d.]+) \[([\d.]+), ([\d.]+)\]", out)
    assert {bob for bob, *_ in rows} == {"always-abort", "never-abort", "random-abort", "bit-abort"}
    for _, rate, low, high in rows:
        assert float(low) <= float(rate) <= float(high)
        assert float(high) >= float(value)  # no built-in Bob beats the exact best one
    assert "BETTER" not in out
    [(_, rate, _, _)] = [row for row in rows if row[0] == "never-abort"]
    assert abs(float(rate) - float(value)) < 0.03  # never aborting is about as good as Bob gets here


def test_my_strategy_through_the_api_and_the_command_line(tmp_path: Path) -> None:
    out = example("my_strategy.py", tmp_path)
    [(mine, honest, steps)] = numbers(
        r"api: bob my_strategy:SpotCheckBob: honest win rate ([\d.]+) against alice lie-step "
        r"\(honest bob: ([\d.]+); T = (\d+)\)",
        out,
    )
    assert 0 < float(mine) < 0.5 and float(honest) == 1.0 and int(steps) == 31  # spot checks miss most lies
    assert numbers(r"accept rate ([\d.]+) against honest alice", out) == ["1.000"]  # and never accuse the truth
    assert numbers(r"cli: bob my_strategy:SpotCheckBob: honest win rate ([\d.]+)", out) == [mine]  # the same debates


def test_api_sweep(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    out = example("api_sweep.py", tmp_path)
    assert "48 cells: ran 48, then ran 0 and kept 48" in out
    assert "results.parquet: 48 rows" in out
    rows = re.findall(r"^(bisection|cross-exam) +(yes|no) +([\w-]+) +([\w-]+) +([\d.]+)$", out, re.MULTILINE)
    assert len(rows) == 8
    for _, truth, alice, bob, rate in rows:  # each adversary on the truth it argues against
        assert (alice if truth == "yes" else bob) == "honest", (truth, alice, bob)
        assert float(rate) == 1.0, (truth, alice, bob)  # Theorems 5.1 and 5.3: c = 1, s = 0


def test_train_from_debates(tmp_path: Path) -> None:
    out = example("train_from_debates.py", tmp_path)
    [(rows, debates, alice, won)] = numbers(r"(\d+) rows from (\d+) debates; Alice's rows: (\d+), won (\d+)", out)
    assert (int(rows), int(debates), int(alice)) == (400, 200, 200) and 100 <= int(won) < 200
    assert "the policy fitted on rewards plays honest Alice: yes" in out
