"""A plan whose answer is no (issue 22, "No dataset"): before, ``--truth`` defaulted to yes, so
``run`` on it was a usage error and a sweep naming it in a grid without a truth axis stopped at
its cell with every later cell unplayed. Now a problem's default truth is its own (a plan's stated
answer, yes where the problem can be either): the run plays it, the sweep plays every cell, the
built-in problems' cell ids are those of the explicit ``truth = yes``, and a truth a plan cannot
have is refused when the grid is read, before any cell runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from debatekit.cli.main import main
from debatekit.experiments.backends import Backend
from debatekit.experiments.grid import GridError, expand
from debatekit.experiments.sweep import swept

PLAN = """title = "Is the Moon a planet?"
answer = "moon"
truth = "no"

[[steps]]
id = "moon"
kind = "question"
text = "Is the Moon a planet?"
p_yes = 0.0
"""


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    file = tmp_path / "moon.toml"
    file.write_text(PLAN)
    return file


def test_a_run_plays_a_no_plan_under_the_default_truth_and_refuses_yes_in_one_line(
    plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "cross-exam", "--problem", str(plan), "--trials", "2", "--json", "--no-log"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["truth"] == "no" and data["accept_rate"] == 0.0 and data["honest_win_rate"] == 1.0
    code = main(["run", "cross-exam", "--problem", str(plan), "--truth", "yes", "--no-log"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "has no 'yes' instance" in err


def test_a_sweep_without_a_truth_axis_plays_each_problem_at_its_own_truth(plan: Path, tmp_path: Path) -> None:
    grid = {"protocol": ["cross-exam"], "problem": [str(plan), "caffeine"], "trials": 2}
    cells = expand(grid)
    assert {(c.problem, c.truth) for c in cells} == {(str(plan), "no"), ("caffeine", "yes")}
    explicit = {c.id for c in expand(grid | {"problem": ["caffeine"], "truth": ["yes"]})}
    assert {c.id for c in cells if c.problem == "caffeine"} == explicit  # the same cell as before
    out = tmp_path / "sweep"
    result = swept(grid, Backend.local, workers=1, out=out)
    assert (result.cells, result.ran) == (2, 2) and len(list(out.glob("cells/*/summary.parquet"))) == 2
    assert {(row["problem"], row["truth"]) for row in result.results} == {("moon", "no"), ("caffeine", "yes")}


def test_a_truth_a_plan_cannot_have_is_refused_before_any_cell_runs(plan: Path) -> None:
    with pytest.raises(GridError, match="has no 'yes' instance"):
        expand({"protocol": ["cross-exam"], "problem": ["caffeine", str(plan)], "truth": ["yes", "no"]})
