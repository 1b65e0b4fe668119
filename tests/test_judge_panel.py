"""``run --verifier-oracle people`` checks the panel before anything is asked: a verifier query that
needs more answers than the judges invited can give (judges x answers per judge) is one line, exit 2,
naming both numbers and the `plan` command that fits, with no task created; a plan that fits is run
with R and the expected judgements per debate known."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from debatekit.cli.main import main
from debatekit.judge import Store
from debatekit.runs.prepare import prepare
from debatekit.runs.spec import RunSpec, judge_db_of


def people_run(db, *extra: str) -> list[str]:
    return ["run", "stochastic", "--problem", "one-claim", "--verifier-oracle", "people", "--judge-db", str(db),
            "--trials", "1", "--no-log", *extra]  # fmt: skip


def test_a_plan_the_panel_cannot_meet_is_refused_before_any_task(store_location, capsys) -> None:
    db = store_location  # a SQLite file or a PostgreSQL URL
    store = Store(db)
    for name in ("a", "b", "c"):
        store.invite(name)
    assert main(people_run(db, "--answers-per-judge", "2")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    needed = int(err.split("asks people for ")[1].split()[0])
    assert needed > 6 and "the panel can give 6 (3 judges x 2 answers per judge" in err
    assert "debatekit plan --K 1.0 --T 1 --verifier-budget 6" in err and "-P verifier_budget=6" in err
    assert store.export()["tasks"] == []


def test_no_judges_is_refused_for_any_protocol(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    argv = ["run", "cross-exam", "--problem", "caffeine", "--verifier-oracle", "people", "--judge-db", str(db),
            "--trials", "1", "--no-log"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the panel can give 0 (0 judges" in err and "debatekit judge invite" in err and err.count("\n") == 1
    assert Store(db).export()["tasks"] == []


def test_a_plan_that_fits_knows_r_and_the_expected_judgements(tmp_path) -> None:
    db = tmp_path / "j.sqlite"
    store = Store(db)
    for name in ("a", "b", "c"):
        store.invite(name)
    spec = RunSpec(protocol="stochastic", problem="one-claim", params=(("verifier_budget", "30"),),
                   verifier_oracle="people", judge_db=db, answers_per_judge=10)  # fmt: skip
    panel = prepare(spec).people
    assert panel is not None and (panel.judges, panel.most) == (3, 30)
    assert 1 <= panel.needed <= 30 and 0 < panel.expected < panel.needed


def test_a_budget_that_certifies_nothing_is_one_line(tmp_path, capsys) -> None:
    db = tmp_path / "j.sqlite"
    Store(db).invite("a")
    assert main(people_run(db, "-P", "verifier_budget=1")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 verifier queries certify no guarantee at K=1, T=1" in err
    assert Store(db).export()["tasks"] == []


def test_the_judges_database_survives_the_run_spec_as_a_file_or_a_url(tmp_path) -> None:
    url, file = "postgresql://judges@db.example:5432/study", tmp_path / "j.sqlite"
    for given, kept in ((url, url), (str(file), file)):
        spec = RunSpec(
            protocol="stochastic", problem="one-claim", verifier_oracle="people", judge_db=judge_db_of(given)
        )
        assert RunSpec.from_json(spec.to_json()).judge_db == kept
