"""A sweep's grid sets how its cells' debates are judged and generated (issue 22): oracles by side,
``--generation``'s file and ``--prompts``' directory as axes, each cell a run with them (its id
apart), refused where a run would refuse them, and kept apart in the report's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from debatekit.experiments.grid import GridError, expand, settings
from debatekit.experiments.report.read import read
from debatekit.experiments.report.series import table

BASE = {"protocol": "stochastic", "problem": "caffeine", "trials": 4}


def test_oracle_axes_make_cells_apart_that_run_as_run_would() -> None:
    cells = expand(BASE | {"verifier_oracle": ["builtin", "sample"], "seed": [0, 1]})
    assert sorted((c.verifier_oracle, c.seed) for c in cells) == [
        ("builtin", 0), ("builtin", 1), ("sample", 0), ("sample", 1)
    ]  # fmt: skip
    assert len({c.id for c in cells}) == 4
    (one,) = expand(BASE)
    assert one.verifier_oracle is None and one.id not in {c.id for c in cells}
    assert [c.prover_oracle for c in expand(BASE, sets=settings(["prover_oracle=sample"]))] == ["sample"]


def test_generation_and_prompts_are_read_as_the_grid_is(tmp_path: Path) -> None:
    pytest.importorskip("tenacity")  # the cell's LLM Bob is checked as run checks it: the llm extra
    generation = tmp_path / "reason.toml"
    generation.write_text('mode = "reason"\nsamples = 3\n')
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    grid = BASE | {"bob": "llm:local/smollm2", "generation": str(generation), "prompts": str(prompts)}
    (cell,) = expand(grid)
    assert (dict(cell.generation), cell.prompts) == ({"mode": "reason", "samples": 3}, prompts)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"generation": "missing.toml", "bob": "llm:local/smollm2"}, "cannot read it"),
        ({"prompts": "no-such-dir"}, "is not a directory of prompts"),
        ({"verifier_oracle": "people"}, "people answer a run of their own"),
        ({"oracle": "oracle-of-delphi"}, "unknown oracle"),
        ({"oracle": 3}, "is not a name"),
    ],
)
def test_a_setting_a_run_would_refuse_is_refused_before_any_cell(extra: dict, says: str) -> None:
    with pytest.raises(GridError, match=says):
        expand(BASE | extra)


def test_generation_without_a_model_is_refused(tmp_path: Path) -> None:
    generation = tmp_path / "g.toml"
    generation.write_text("samples = 3\n")
    with pytest.raises(GridError, match="generation sets how models answer"):
        expand(BASE | {"generation": str(generation)})


def test_the_report_keeps_cells_of_different_oracles_in_rows_apart(tmp_path: Path) -> None:
    import debatekit

    debatekit.sweep(BASE | {"verifier_oracle": ["builtin", "sample"]}, out=tmp_path / "sweep")
    rows = table(read(tmp_path / "sweep"))
    assert sorted(row.oracle or "" for row in rows) == ["builtin", "prover builtin, verifier sample"]
    assert all(row.trials == 4 for row in rows)
