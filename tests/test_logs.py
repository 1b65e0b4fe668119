"""Run logs (issue 13, point 1): every ``run`` leaves a folder with its command, configuration,
records and summary; two runs never share one; ``--no-log`` keeps none; ``logs`` lists them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from debatekit.cli.main import main
from debatekit.engine.record import read_records
from debatekit.experiments.logs import RunLog, runs

RUN = ("run", "cross-exam", "--problem", "parity", "--size", "16", "--bob", "point-random", "--trials", "7")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_leaves_its_command_config_records_and_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = cli(capsys, *RUN, "--seed", "3", "--log-dir", tmp_path, "--log-records", "--json")
    assert code == 0, err
    printed = json.loads(out)  # stdout stays one JSON object
    (folder,) = tmp_path.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["debates.jsonl", "run.json", "summary.json"]
    head = json.loads((folder / "run.json").read_text())
    argv = [*map(str, RUN), "--seed", "3", "--log-dir", str(tmp_path), "--log-records", "--json"]
    assert head["argv"] == ["debatekit", *argv]
    config = head["config"]
    assert (config["protocol"], config["problem"], config["size"]) == ("cross-exam", "parity", 16)
    assert config["truth"] == "yes"
    assert (config["alice"], config["bob"], config["trials"], config["seed"]) == ("honest", "point-random", 7, 3)
    assert config["oracles"]["oracle"] == "builtin"
    assert head["version"] and "git_commit" in head
    assert head["record_path"] == str((folder / "debates.jsonl").resolve())
    records = list(read_records(folder / "debates.jsonl"))
    assert [r["debate"] for r in records] == list(range(7))
    summary = json.loads((folder / "summary.json").read_text())
    assert summary.pop("elapsed_s") >= 0
    assert summary == printed


def test_a_users_record_is_kept_and_referenced(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    code, _, err = cli(capsys, *RUN, "--record", mine, "--log-dir", tmp_path / "logs")
    assert code == 0, err
    (folder,) = (tmp_path / "logs").iterdir()
    assert not (folder / "debates.jsonl").exists()
    assert json.loads((folder / "run.json").read_text())["record_path"] == str(mine.resolve())
    assert len(mine.read_text().splitlines()) == 1 + 7  # the header and 7 debates


def test_two_runs_never_share_a_folder(tmp_path: Path) -> None:
    config = {"protocol": "cross-exam"}
    folders = {RunLog.start(tmp_path, ["debatekit"], config).folder for _ in range(20)}  # same second
    assert len(folders) == 20
    assert all((f / "run.json").exists() for f in folders)


def test_no_log_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = cli(capsys, *RUN, "--log-dir", tmp_path / "logs", "--no-log")
    assert code == 0, err
    assert not (tmp_path / "logs").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_log_dir_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, out, err = cli(capsys, *RUN, "--log-dir", locked / "logs", "--record", tmp_path / "r.jsonl")
    finally:
        locked.chmod(0o700)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "--log-dir" in err
    assert (tmp_path / "r.jsonl").read_text() == ""  # checked before any debate was played


def test_a_log_dir_that_is_a_file_is_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    code, out, err = cli(capsys, *RUN, "--log-dir", afile)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    code, out, _ = cli(capsys, "--version")
    assert code == 0
    assert out.strip() == f"debatekit {version('debatekit')}"


def test_logs_lists_every_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for truth in ("yes", "no"):
        assert cli(capsys, *RUN, "--truth", truth, "--log-dir", tmp_path)[0] == 0
    found = runs(tmp_path)
    assert sorted((r.protocol, r.problem, r.size, r.truth, r.alice, r.bob, r.trials) for r in found) == [
        ("cross-exam", "parity", 16, truth, "honest", "point-random", 7) for truth in ("no", "yes")
    ]
    assert {r.truth: r.accept_rate for r in found}["yes"] == 1.0
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path)
    assert code == 0
    for run in found:
        assert run.folder.name in out
    assert "cross-exam" in out and "point-random" in out and "1.000" in out


def test_solve_and_plan_are_logged_with_what_their_json_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """solve and plan leave a folder each when done (a mistake leaves none); logs lists them."""
    commands = {
        "solve": ("solve", "cross-exam", "--problem", "parity", "--size", "4"),
        "plan": ("plan", "--K", "2", "--T", "100"),
    }
    printed = {}
    for name, argv in commands.items():
        code, out, _ = cli(capsys, *argv, "--json", "--log-dir", tmp_path)
        assert code == 0
        printed[name] = json.loads(out)
    assert cli(capsys, "solve", "no-such-protocol", "--problem", "parity", "--log-dir", tmp_path)[0] == 2
    found = runs(tmp_path)
    assert sorted(r.command for r in found) == ["plan", "solve"]
    for run in found:
        head = json.loads((run.folder / "run.json").read_text())
        assert head["config"]["command"] == run.command and head["argv"][1] == run.command
        summary = json.loads((run.folder / "summary.json").read_text())
        assert {k: v for k, v in summary.items() if k != "elapsed_s"} == printed[run.command]
    outcomes = {r.command: r.outcome for r in found}
    assert outcomes == {"solve": f"exact {printed['solve']['exact']}",
                        "plan": f"{printed['plan']['verifier_queries']} V queries"}  # fmt: skip
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path)
    assert code == 0 and "solve cross-exam on parity size 4" in out and "V queries" in out


def test_logs_json_gives_each_command_whole_and_filters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stochastic = ("run", "stochastic", "--problem", "noisy-majority", "--size", "6", "--trials", "4")
    assert cli(capsys, *stochastic, "--constants", "lean", "--log-dir", tmp_path)[0] == 0
    assert cli(capsys, *stochastic, "--constants", "paper", "--log-dir", tmp_path)[0] == 0
    assert cli(capsys, "solve", "cross-exam", "--problem", "parity", "--size", "4", "--log-dir", tmp_path)[0] == 0
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path, "--json")
    listed = json.loads(out)
    assert code == 0 and sorted(e["command"] for e in listed) == ["run", "run", "solve"]
    for entry in listed:
        head = json.loads((Path(entry["folder"]) / "run.json").read_text())
        assert (entry["config"], entry["version"], entry["git_commit"]) == (
            head["config"], head["version"], head["git_commit"])  # fmt: skip
        assert entry["finished"] and entry["elapsed_s"] > 0 and entry["outcome"]
    assert sorted(e["config"]["constants"] for e in listed if e["command"] == "run") == ["lean", "paper"]
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path, "--json", "--command", "solve")
    assert [e["command"] for e in json.loads(out)] == ["solve"]
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path, "--json", "--protocol", "cross-exam", "--unfinished")
    assert json.loads(out) == []
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path)
    assert code == 0 and "constants=lean" in out and "constants=paper" in out and "truth yes" in out
    code, out, err = cli(capsys, "logs", "--log-dir", tmp_path, "--problem", "parity", "--command", "run")
    assert (code, out) == (0, "") and "no runs logged" in err and "that match" in err


def test_solves_that_differ_only_in_their_parameters_are_told_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """solve keeps its -P as given (NAME=VALUE); logs shows them, and the solve as finished."""
    solve = (
        "solve",
        "stochastic",
        "--problem",
        "noisy-majority",
        "--size",
        "6",
        "--truth",
        "no",
        "--log-dir",
        tmp_path,
    )
    for constants in ("lean", "paper"):
        assert cli(capsys, *solve, "-P", f"constants={constants}")[0] == 0
    code, out, _ = cli(capsys, "logs", "--log-dir", tmp_path)
    rows = [line for line in out.splitlines() if "solve stochastic" in line]
    assert code == 0 and len(rows) == 2
    for row, constants in zip(rows, ("lean", "paper"), strict=True):
        assert f"truth no constants={constants}" in row and "exact 0." in row
    code, out, err = cli(capsys, "logs", "--log-dir", tmp_path, "--unfinished")
    assert (code, out) == (0, "") and "no runs logged" in err


def test_logs_of_an_empty_folder_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = cli(capsys, "logs", "--log-dir", tmp_path)
    assert (code, out) == (0, "")
    assert "no runs" in err


def test_records_are_kept_in_the_log_only_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = cli(capsys, *RUN, "--log-dir", tmp_path)
    assert code == 0, err
    (folder,) = tmp_path.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == ["run.json", "summary.json"]
    assert json.loads((folder / "run.json").read_text())["record_path"] is None


@pytest.mark.parametrize(
    "argv", [("solve", "cross-exam", "--problem", "parity", "--size", "4"), ("plan", "--K", "2", "--T", "100")]
)
def test_solve_and_plan_check_the_log_folder_before_the_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...]
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    code, out, err = cli(capsys, *argv, "--log-dir", blocked / "logs")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "cannot write the log folder" in err
