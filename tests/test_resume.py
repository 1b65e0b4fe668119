"""A run whose process died resumes from its record: the whole debates it holds are kept and
counted, a debate cut off mid-write is played again, and the file and the result are those of a
run never stopped (debate i depends only on the seed and i)."""

from __future__ import annotations

import json

import pytest

from debatekit.analysis.montecarlo import ResumeError, make_instance, run
from debatekit.catalog import PROTOCOLS
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS

CASES = [
    ("cross-exam", "approval-majority", 8, "honest", "point-random"),
    ("stochastic", "noisy-majority", 8, "bias", "random-abort"),
]


def cut(path, whole: int) -> None:
    """Keep ``whole`` records and half of the next line, as a process killed mid-write leaves it."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:whole]) + lines[whole][: len(lines[whole]) // 2])


@pytest.mark.parametrize(("name", "problem", "size", "alice", "bob"), CASES)
def test_a_resumed_run_is_the_run_never_stopped(tmp_path, name, problem, size, alice, bob) -> None:
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, False, seed=3)
    players = spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob]
    whole, resumed = tmp_path / "whole.jsonl", tmp_path / "resumed.jsonl"
    expected = run(spec, instance, *players, 20, 5, record=whole)
    resumed.write_bytes(whole.read_bytes())
    cut(resumed, 7)
    again = run(spec, instance, *players, 20, 5, record=resumed, resume=True)
    assert resumed.read_bytes() == whole.read_bytes()
    assert again.to_json() == expected.to_json()
    done = run(spec, instance, *players, 20, 5, record=resumed, resume=True)  # nothing left to play
    assert done.to_json() == expected.to_json() and resumed.read_bytes() == whole.read_bytes()


def test_a_record_of_another_run_is_not_resumed(tmp_path) -> None:
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["approval-majority"], 8, True, seed=3)
    players = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    path = tmp_path / "d.jsonl"
    run(spec, instance, *players, 5, 1, record=path)
    with pytest.raises(ResumeError, match="not debate 0 of this run"):
        run(spec, instance, *players, 10, 2, record=path, resume=True)
    with pytest.raises(ResumeError, match="more than"):
        run(spec, instance, *players, 3, 1, record=path, resume=True)


def test_resume_on_the_command_line(tmp_path, capsys) -> None:
    path = tmp_path / "d.jsonl"
    base = ["run", "cross-exam", "--problem", "parity", "--size", "16", "--trials", "12", "--bob", "point-random",
            "--record", str(path), "--json"]  # fmt: skip
    assert main(base) == 0
    first = json.loads(capsys.readouterr().out)
    cut(path, 4)
    assert main([*base, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert main(["replay", str(path)]) == 0
    capsys.readouterr()
    assert main([*base, "--resume", "--seed", "9"]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and len(err.strip().splitlines()) == 1
    assert main([*base[:-3], "--json", "--resume"]) == 2  # no --record
