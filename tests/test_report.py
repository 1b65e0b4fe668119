"""``debatekit report`` and the demo's report (issue 13, point 3): every plot the demo's report holds
is drawn here, as a valid PNG the HTML embeds and links, and what each plot draws (its ``series``)
equals what was read; a sweep's report and a log folder's (run, solve and plan logs) draw theirs;
mistakes are one line and status 2."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
from pathlib import Path

import pytest

from debatekit.analysis.stats import wilson
from debatekit.cli.main import main
from debatekit.experiments.logs import RunLog
from debatekit.experiments.report import series as plots
from debatekit.experiments.report.html import REPORT_FILE
from debatekit.experiments.report.read import from_demo, read

PNG = b"\x89PNG\r\n\x1a\n"
DEMO_PLOTS = ("rates.png", "bits_read.png", "exact_vs_mc.png", "payoffs.png", "reward_gap.png")


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(code: int, out: str, err: str) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.startswith("debatekit: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def assert_plots(folder: Path, names: tuple[str, ...]) -> str:
    """Each PNG exists, is a PNG of a README's width, and report.html embeds it and links it."""
    html = (folder / REPORT_FILE).read_text(encoding="utf-8")
    for name in names:
        data = (folder / name).read_bytes()
        assert data[:8] == PNG, name
        width, height = struct.unpack(">II", data[16:24])
        assert 600 <= width <= 1000 and 200 <= height <= 4000, (name, width, height)
        assert f'<a href="{name}">' in html, name
        assert f"data:image/png;base64,{base64.b64encode(data).decode()}" in html, name
    return html


WORKER = os.environ.get("PYTEST_XDIST_WORKER")
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
DEMO_ARTIFACT = ARTIFACTS / f"demo-report{'-' + WORKER if WORKER else ''}"
"""Where the demo's report is kept after the tests (git-ignored), for a look at its plots (one
per worker under pytest-xdist, each of which plays the module's demo)."""


@pytest.fixture(scope="module")
def demo() -> tuple[dict, Path]:
    """One quick demo, logged: its JSON and its report folder."""
    logs = DEMO_ARTIFACT.with_name(DEMO_ARTIFACT.name + "-logs")
    for earlier in (DEMO_ARTIFACT, logs):  # kept for CI (conftest prints where): this run's only
        shutil.rmtree(earlier, ignore_errors=True)
    code = main(["demo", "--quick", "--json", "--log-dir", str(logs), "--out", str(DEMO_ARTIFACT)])
    assert code == 0
    return json.loads((DEMO_ARTIFACT / "results.json").read_text()), DEMO_ARTIFACT


def test_demo_report_draws_every_plot(demo: tuple[dict, Path]) -> None:
    data, folder = demo
    html = assert_plots(folder, DEMO_PLOTS)
    assert (folder / "results.json").exists() and (folder / "report.md").exists()
    assert html.count("<tr>") > len(data["rows"])  # the table: one row per run


def test_demo_rates_are_the_rows_pooled_with_wilson_intervals(demo: tuple[dict, Path]) -> None:
    data, _ = demo
    series = plots.rates_series(from_demo(data))
    for row in data["rows"]:
        label = row["protocol"] if row["constants"] is None else f"{row['protocol']} ({row['constants']})"
        adversary = "both honest" if row["adversary"].endswith(":honest") else row["adversary"]
        pooled = [r for r in data["rows"] + data["exact_runs"]
                  if r["protocol"] == row["protocol"] and r["constants"] == row["constants"]
                  and r["adversary"] == row["adversary"] and r["truth"] == row["truth"]]  # fmt: skip
        accepts = sum(round(r["accept_rate"] * r["trials"]) for r in pooled)
        trials = sum(r["trials"] for r in pooled)
        rate = series[(label, adversary)][row["truth"]]["accept"]
        assert (rate.successes, rate.trials) == (accepts, trials)
        assert (rate.low, rate.high) == wilson(accepts, trials)
        if row["truth"] == "yes" and row["adversary"].startswith("alice:") and adversary != "both honest":
            assert rate.promise is None  # completeness promises nothing to a dishonest Alice
        elif row["truth"] == "yes" and (promise := min(r["completeness"] for r in pooled)) > 0:
            assert rate.promise == promise


def test_demo_bits_read_is_the_scaling_runs(demo: tuple[dict, Path]) -> None:
    data, _ = demo
    series = plots.bits_series(from_demo(data))
    for s in data["scaling"]:
        point = next(p for p in series[(s["protocol"], s["problem"])] if p.n == s["size"])
        assert point.bits_read_max >= s["verifier_bits_read_max"] and point.bound <= s["bits_bound"]
        assert point.bits_read_max <= point.bound
    assert {(s["protocol"], s["problem"]) for s in data["scaling"]} <= set(series)


def test_demo_exact_beside_monte_carlo(demo: tuple[dict, Path]) -> None:
    data, _ = demo
    series = plots.exact_series(from_demo(data))
    assert len(series) == len(data["exact"])
    for exact, run in series:
        solved = next(s for s in data["exact"] if (s["protocol"], s["problem"], s["size"], s["truth"])
                      == (exact.protocol, exact.problem, exact.size, exact.truth))  # fmt: skip
        assert exact.value == solved["value"]
        played = [r for r in data["exact_runs"] if (r["protocol"], r["problem"], r["size"], r["truth"])
                  == (exact.protocol, exact.problem, exact.size, exact.truth)]  # fmt: skip
        assert run.honest_win_rate == min(r["honest_win_rate"] for r in played)


def test_demo_payoffs_are_the_prover_estimator_rows(demo: tuple[dict, Path]) -> None:
    data, _ = demo
    series = plots.payoff_series(from_demo(data))
    drawn = [(r.protocol, r.alice, r.bob, r.truth, r.payoff_mean, r.payoff_bound) for rs in series.values() for r in rs]
    rows = [(p["protocol"], p["alice"], p["bob"], p["truth"], p["payoff_mean"], p["payoff_bound"])
            for p in data["prover_estimator"]]  # fmt: skip
    assert sorted(drawn) == sorted(rows)


def test_demo_log_holds_the_report_path(demo: tuple[dict, Path]) -> None:
    _, folder = demo
    (log,) = folder.with_name(folder.name + "-logs").iterdir()
    head = json.loads((log / "run.json").read_text())
    assert head["config"]["command"] == "demo"
    assert json.loads((log / "summary.json").read_text())["report"] == str(folder)
    again = read(folder.with_name(folder.name + "-logs"))  # a demo's log reads as its rows
    assert len(again.runs) == len(from_demo(json.loads((folder / "results.json").read_text())).runs)


GRID = """trials = 10
seed = 0
truth = ["yes", "no"]
protocol = "cross-exam"
problem = "parity"
size = [8, 32]
bob = ["honest", "point-random"]
"""


def test_sweep_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    code, _, err = cli(capsys, "sweep", grid, "--out", tmp_path / "sweep", "--workers", 1)
    assert code == 0, err
    code, out, err = cli(capsys, "report", tmp_path / "sweep")
    assert code == 0, err
    assert out == f"{tmp_path / 'sweep' / 'report' / 'report.html'}\n"
    html = assert_plots(tmp_path / "sweep" / "report", ("rates.png", "accept_vs_T.png", "queries_vs_T.png",
                                                         "bits_read.png"))  # fmt: skip
    assert "Not drawn: needs `debatekit plan --frontier` logs." in html
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "sweep" / "results.parquet").to_pylist()
    report = read(tmp_path / "sweep")
    assert len(report.runs) == len(table) == 8
    series = plots.accept_series(report)
    for row in table:
        adversary = "both honest" if row["bob"] == "honest" else f"bob:{row['bob']}"
        rate = series[("cross-exam", "parity", row["truth"])][adversary][row["T"]]
        assert rate.rate == row["accept_rate"] and rate.trials == row["trials"]
    assert "seed 0; 10 debates per run" in html


FRONTIER = {  # what `plan --frontier --json` prints, cut to the fields the report reads
    "K": 4.0,
    "T": 100,
    "frontier": [
        {"multiplier": m, "direct": {"prover_budget": [100 * m, 50 * m], "verifier_queries": 2000 // m},
         "lean": {"prover_budget": [100 * m, 50 * m], "verifier_queries": 3000 // m}}
        for m in (1, 3, 10)
    ],
    "lean": {"alice_queries_per_step": 100, "verifier_queries": 20000},
    "paper": {"alice_queries_per_step": 5000, "verifier_queries": 90000},
}  # fmt: skip


def test_log_folder_with_run_solve_and_plan_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # whatever solve and plan may log by default stays here
    logs = tmp_path / "logs"
    runs = (
        ["cross-exam", "--problem", "parity", "--size", "4", "--bob", "point-random"],
        ["cross-exam", "--problem", "parity", "--size", "4", "--truth", "no", "--alice", "lie-output"],
        ["prover-estimator", "--problem", "obfuscated-primality", "--size", "8", "--log-records"],
    )
    for argv in runs:
        code, _, err = cli(capsys, "run", *argv, "--trials", 10, "--log-dir", logs, "--json")
        assert code == 0, err
    solved = []
    for truth in ("yes", "no"):
        code, out, err = cli(capsys, "solve", "cross-exam", "--problem", "parity", "--size", 4, "--truth", truth,
                             "--json")  # fmt: skip
        assert code == 0, err
        solved.append(json.loads(out))
        config = {"command": "solve", "protocol": "cross-exam", "problem": "parity", "size": 4, "truth": truth,
                  "seed": 0}  # fmt: skip
        RunLog.start(logs, ["debatekit", "solve"], config).finish(solved[-1], 0.1)
    RunLog.start(logs, ["debatekit", "plan"], {"command": "plan", "K": 4.0, "T": 100}).finish(FRONTIER, 0.1)
    code, out, err = cli(capsys, "report", logs, "--out", tmp_path / "out")
    assert code == 0, err
    html = assert_plots(tmp_path / "out", ("rates.png", "exact_vs_mc.png", "frontier.png", "payoffs.png",
                                           "rewards.png"))  # fmt: skip
    report = read(logs)
    assert len(report.runs) == 3 and len(report.exact) == 2 and len(report.frontiers) == 1
    assert [e.value for e, _ in plots.exact_series(report)] == [s["value"] for s in solved]
    (frontier,) = plots.frontier_series(report)
    assert [(p.proof, p.prover_budget, p.verifier_queries) for p in frontier.points] == [
        (proof, row[proof]["prover_budget"][0], row[proof]["verifier_queries"])
        for row in FRONTIER["frontier"] for proof in ("direct", "lean")
    ]  # fmt: skip
    (pe,) = plots.payoff_series(report)["prover-estimator"]
    assert len(pe.payoffs) == 10 and sum(pe.payoffs) / 10 == pytest.approx(pe.payoff_mean)
    (rewarded,) = plots.rewards_series(report)
    assert rewarded.rewards[0][0] == "initial"
    assert re.search(r"Not drawn: needs runs of one protocol and problem at several sizes", html)
    code, out, err = cli(capsys, "report", logs, "--out", tmp_path / "again", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["report"] == str(tmp_path / "again" / "report.html") and len(data["runs"]) == 3
    drawn = {plot["file"]: plot for plot in data["plots"]}
    assert drawn["accept_vs_T.png"]["series"] is None and "Not drawn" in drawn["accept_vs_T.png"]["note"]
    assert [exact["value"] for exact, _ in drawn["exact_vs_mc.png"]["series"]] == [s["value"] for s in solved]
    listed = {tuple(entry["key"]): entry["value"] for entry in drawn["rates.png"]["series"]}
    pooled = plots.rates_series(report)
    assert set(listed) == set(pooled)
    for key, truths in pooled.items():
        for truth, rates in truths.items():
            for name, rate in rates.items():
                assert listed[key][truth][name] == {"successes": rate.successes, "trials": rate.trials,
                                                    "low": rate.low, "high": rate.high, "promise": rate.promise,
                                                    "rate": rate.rate}  # fmt: skip


def test_report_mistakes_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert_usage_error(*cli(capsys, "report", tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    assert_usage_error(*cli(capsys, "report", tmp_path / "empty"))
    (tmp_path / "file").write_text("")
    assert_usage_error(*cli(capsys, "report", tmp_path, "--out", tmp_path / "file" / "sub"))


def test_demo_mistakes_are_checked_before_the_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from debatekit.experiments import demo

    def played(*args: object, **kwargs: object) -> None:
        raise AssertionError("the demo was played before its options were checked")

    monkeypatch.setattr(demo, "run_demo", played)  # no debate is played: not timed (a loaded machine)
    (tmp_path / "file").write_text("")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "report.html").write_text("earlier")
    assert_usage_error(*cli(capsys, "demo", "--quick", "--out", tmp_path / "file" / "sub", "--no-log"))
    assert_usage_error(*cli(capsys, "demo", "--quick", "--out", tmp_path / "old", "--no-log"))
    assert_usage_error(*cli(capsys, "demo", "--quick", "--no-log"))
    assert_usage_error(*cli(capsys, "demo", "--quick", "--log-dir", tmp_path / "file"))
    assert (tmp_path / "old" / "report.html").read_text() == "earlier"
