"""``debatekit report`` and the demo's report (issue 13, point 3): every plot the demo's report holds
is drawn here, as a valid PNG the HTML embeds and links, and what each plot draws (its ``series``)
equals what was read; a sweep's report and a log folder's (run, solve and plan logs) draw theirs;
mistakes are one line and status 2."""

from __future__ import annotations

import base64
import itertools
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
from debatekit.experiments.report.html import REPORT_FILE, series_json, write
from debatekit.experiments.report.read import from_demo, read, run_from
from debatekit.experiments.report.rows import Exact, Report, Run

PNG = b"\x89PNG\r\n\x1a\n"
DEMO_PLOTS = (
    "rates.png",
    "accept_vs_T.png",
    "queries_vs_T.png",
    "bits_read.png",
    "exact_vs_mc.png",
    "payoffs.png",
    "reward_gap.png",
)


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
                  and r["problem"] == row["problem"] and r["adversary"] == row["adversary"]
                  and r["truth"] == row["truth"]]  # fmt: skip
        accepts = sum(round(r["accept_rate"] * r["trials"]) for r in pooled)
        trials = sum(r["trials"] for r in pooled)
        rate = series[(f"{label} on {row['problem']}", adversary)][row["truth"]].accept
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
    drawn = [(r.protocol, r.alice, r.bob, r.problem, r.truth, r.payoff_mean) for rs in series.values() for r in rs]
    rows = {(p["protocol"], p["alice"], p["bob"], p["problem"], p["truth"], p["payoff_mean"])
            for p in data["prover_estimator"]}  # fmt: skip
    assert sorted(drawn) == sorted(rows)  # an experiment that repeats a run (its seed) is drawn once


def test_demo_payoff_bound_is_drawn_only_where_the_theorem_promises_one(demo: tuple[dict, Path]) -> None:
    """payoffs.png drew "the theorem's bound" at 0 on rows the table marks "no promise"."""
    data, _ = demo
    drawn = {(r.protocol, r.alice, r.bob, r.problem, r.truth): r for rs in plots.payoff_series(from_demo(data)).values()
             for r in rs}  # fmt: skip
    assert any(p["holds"] is None for p in data["prover_estimator"]) and any(
        p["holds"] for p in data["prover_estimator"]
    )
    for p in data["prover_estimator"]:
        row = drawn[(p["protocol"], p["alice"], p["bob"], p["problem"], p["truth"])]
        if p["holds"] is None:
            assert row.payoff_bound is None and row.verdict == "no promise" and row.promise.startswith("no promise")
        else:
            assert row.payoff_bound == p["payoff_bound"] and row.verdict == ("yes" if p["holds"] else "NO")


def test_demo_rates_say_why_a_line_has_no_accept_rate(demo: tuple[dict, Path]) -> None:
    """The accept panel was blank for every naive-recursive and prover-estimator line, without a word."""
    data, _ = demo
    series = plots.rates_series(from_demo(data))
    payoff_games = {p["protocol"] for p in data["prover_estimator"]}
    seen = set()
    for (heading, _), truths in series.items():
        for rates in truths.values():
            if heading.split()[0] in payoff_games:
                assert rates.accept is None and "scored by A's payoff" in rates.no_accept, heading
                seen.add(heading.split()[0])
            else:
                assert rates.accept is not None and rates.no_accept == ""
    assert seen == payoff_games == {"naive-recursive", "prover-estimator"}


def test_demo_queries_plot_leads_with_stochastic_debate_against_its_bound(demo: tuple[dict, Path]) -> None:
    """queries_vs_T.png showed only protocols with 0 queries against a bound of 1."""
    data, _ = demo
    report = from_demo(data)
    series = plots.queries_T_series(report)
    stochastic = [key for key in series if key[0].startswith("stochastic")]
    assert stochastic and list(series)[: len(stochastic)] == stochastic
    for label, problem in stochastic:
        rows = [r for r in plots.table(report) if (r.label, r.problem) == (label, problem)]
        ((T, measured, bound),) = series[(label, problem)]["verifier (max)"]
        assert T == rows[0].T and measured == max(r.verifier_queries_max for r in rows) > 1
        assert bound == min(r.queries_bound for r in rows) >= measured


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


PE_GRID = """trials = 12
seed = 0
truth = "no"
protocol = "prover-estimator"
problem = "obfuscated-primality"
size = 8
alice = "obfuscate"
bob = "omniscient"
"""


@pytest.mark.parametrize(("records", "marks"), [("all", 12), ("failures", 0)])
def test_a_sweep_cells_debate_marks_only_from_every_debate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, records: str, marks: int
) -> None:
    """Per-debate payoff marks come from a cell's records only when it kept every debate: the
    default keeps a sample skewed to failures, which would bias the marks (the means come from the
    summary either way)."""
    grid = tmp_path / "grid.toml"
    grid.write_text(PE_GRID)
    code, _, err = cli(capsys, "sweep", grid, "--out", tmp_path / "sweep", "--workers", 1, "--records", records)
    assert code == 0, err
    (run,) = read(tmp_path / "sweep").runs
    assert len(run.payoffs) == marks and run.payoff_mean is not None


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
            for name in ("accept", "honest_win"):
                rate = getattr(rates, name)
                assert listed[key][truth][name] == (None if rate is None else {
                    "successes": rate.successes, "trials": rate.trials, "low": rate.low, "high": rate.high,
                    "promise": rate.promise, "rate": rate.rate})  # fmt: skip
            assert listed[key][truth]["no_accept"] == rates.no_accept


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


def flat_run(source: str, **changes: object) -> Run:
    """A run as its flat row reads (``run --json`` joined by ``_``), cross-examination on parity by default."""
    row = {
        "protocol": "cross-exam", "problem": "parity", "size": 8, "T": 7, "truth": "yes", "alice": "honest",
        "bob": "honest", "seed": 0, "trials": 100, "accept_rate": 1.0, "honest_win_rate": 1.0,
        "guarantee_completeness": 1.0, "guarantee_soundness": 0.0, "guarantee_verifier_queries": 1,
        "guarantee_bits_read": 20, "verifier_queries_max": 0, "verifier_bits_read_max": 5, "oracles_oracle": "builtin",
    }  # fmt: skip
    return run_from(row | changes, source)


def test_table_pools_seeds_and_never_pools_oracles_parameters_or_constants() -> None:
    """Rows were ordered by hash id, seeds were not pooled, and a 0.9 run with a model oracle and a 1.0
    run with the built-in one read as one rate of 0.95; runs that differ only in -P could not be told apart."""
    runs = [
        flat_run("f3", seed=1, accept_rate=0.9, honest_win_rate=0.9),
        flat_run("a1", seed=0),
        flat_run("a1-again", seed=0),  # the same seed again: the same debates, counted once
        flat_run("b2", seed=0, accept_rate=0.9, honest_win_rate=0.9, oracles_oracle="llm:openai/gpt-4o"),
        flat_run("c9", truth="no", alice="lie-output", accept_rate=0.0, honest_win_rate=1.0),
        flat_run("d0", problem="majority"),
        flat_run("e4", protocol="stochastic", constants="lean", problem="noisy-majority", params_budget=10),
        flat_run("e5", protocol="stochastic", constants="lean", problem="noisy-majority", params_budget=20),
        flat_run("e6", protocol="stochastic", constants="paper", problem="noisy-majority", params_budget=10),
    ]
    rows = plots.table(Report("t", runs=runs))
    assert [(r.label, r.problem, r.truth) for r in rows] == [
        ("cross-exam [oracle builtin]", "majority", "yes"),
        ("cross-exam [oracle builtin]", "parity", "yes"),
        ("cross-exam [oracle builtin]", "parity", "no"),
        ("cross-exam [oracle llm:openai/gpt-4o]", "parity", "yes"),
        ("stochastic (lean) [budget=10]", "noisy-majority", "yes"),
        ("stochastic (lean) [budget=20]", "noisy-majority", "yes"),
        ("stochastic (paper)", "noisy-majority", "yes"),
    ]
    pooled = rows[1]
    assert pooled.seeds == (0, 1) and pooled.runs == 2 and pooled.trials == 200
    assert (pooled.accept.successes, pooled.accept.trials) == (190, 200)
    assert (pooled.accept.low, pooled.accept.high) == wilson(190, 200)
    assert rows[3].accept.rate == 0.9 and rows[3].oracle == "llm:openai/gpt-4o"
    assert rows[4].params == (("budget", "10"),) and rows[5].params == (("budget", "20"),)
    rates = plots.rates_series(Report("t", runs=runs))
    assert rates[("cross-exam [oracle builtin] on parity", "both honest")]["yes"].accept.rate == 0.95
    assert rates[("cross-exam [oracle llm:openai/gpt-4o] on parity", "both honest")]["yes"].accept.rate == 0.9


def test_holds_column_checks_the_promise_where_one_applies(tmp_path: Path) -> None:
    runs = [
        flat_run("held"),
        flat_run("short", problem="majority", accept_rate=0.5, guarantee_completeness=0.9),
        flat_run("over", problem="palindrome", verifier_queries_max=3),
        flat_run("liar", problem="sat-witness", alice="lie-output", accept_rate=0.2, honest_win_rate=0.8),
        flat_run("sound", truth="no", bob="honest", accept_rate=0.0, guarantee_soundness=0.0),
    ]
    report = Report("holds", runs=runs)
    verdicts = {(r.problem, r.truth): (r.verdict, r.promise) for r in plots.table(report)}
    assert verdicts[("parity", "yes")][0] == "yes" and "accept >= c = 1" in verdicts[("parity", "yes")][1]
    assert verdicts[("majority", "yes")] == ("NO", "fails: accept >= c = 0.9")
    assert verdicts[("palindrome", "yes")] == ("NO", "fails: verifier queries <= 1")
    assert verdicts[("sat-witness", "yes")] == (
        "no promise",
        "no promise: the theorem promises nothing to a dishonest alice",
    )
    assert verdicts[("parity", "no")][0] == "yes" and "accept <= s = 0" in verdicts[("parity", "no")][1]
    write(report, tmp_path)
    html = (tmp_path / REPORT_FILE).read_text(encoding="utf-8")
    cells = re.findall(r'<td class="text holds">([^<]*)<br>', html)
    assert sorted(cells) == sorted(r.verdict for r in plots.table(report)) and "no promise" in cells


def test_exact_plot_says_why_every_value_is_one(demo: tuple[dict, Path]) -> None:
    """exact_vs_mc.png had every point at 1.0 and did not say why."""
    data, folder = demo
    series = plots.exact_series(from_demo(data))
    assert all(e.value == 1 for e, _ in series)
    note = plots.exact_note(series)
    assert f"Every one of the {len(series)} exact values is 1" in note
    html = (folder / REPORT_FILE).read_text(encoding="utf-8")
    assert note in re.search(r'<figure id="exact_vs_mc.png">.*?</figure>', html, re.S).group(0)
    below = [(Exact("s", "stochastic", "noisy-majority", 3, "yes", 0, "alice", 0.75, 0.6), series[0][1])]
    assert plots.exact_note(series + below) == ""


def test_log_ticks_do_not_overlap() -> None:
    """bits_read.png's x-tick labels overlapped."""
    from debatekit.experiments.report.draw import _log_ticks, _panels

    xs = [100000, 150000, 200000, 300000, 400000, 600000, 800000, 1000000]
    fig, axes = _panels(2, 3.4)
    for ax in axes:
        _log_ticks(ax, xs)
    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in axes:
        boxes = [label.get_window_extent(renderer) for label in ax.get_xticklabels() if label.get_text()]
        assert len(boxes) >= 3 and boxes[0].x0 < boxes[-1].x0
        for left, right in itertools.pairwise(boxes):
            assert left.x1 < right.x0, (left, right)


def test_plots_and_json_are_the_tables_numbers(demo: tuple[dict, Path]) -> None:
    """What each plot draws is the table's numbers, and `report --json` says the same."""
    data, _ = demo
    report = from_demo(data)
    rows = plots.table(report)
    rates = plots.rates_series(report)
    for (heading, adversary), truths in rates.items():
        for truth, line in truths.items():
            mine = [
                r for r in rows if (f"{r.label} on {r.problem}", r.adversary, r.truth) == (heading, adversary, truth)
            ]
            assert line.honest_win.successes == sum(r.honest_win.successes for r in mine)
            assert line.honest_win.trials == sum(r.trials for r in mine)
            if line.accept is not None:
                assert line.accept.successes == sum(r.accept.successes for r in mine)
    assert sum(line.honest_win.trials for truths in rates.values() for line in truths.values()) == sum(
        r.trials for r in rows
    )
    for (label, problem, truth), by_adversary in plots.accept_series(report).items():
        for adversary, by_T in by_adversary.items():
            for T, rate in by_T.items():
                (row,) = [r for r in rows if (r.label, r.problem, r.truth, r.adversary, r.T)
                          == (label, problem, truth, adversary, T)]  # fmt: skip
                assert (rate.successes, rate.trials) == (row.accept.successes, row.accept.trials)
    drawn = [r for rs in plots.payoff_series(report).values() for r in rs]
    assert drawn == [r for r in rows if r.payoff_mean is not None]
    listed = series_json(report)
    assert len(listed["table"]) == len(rows)
    for entry, row in zip(listed["table"], rows, strict=True):
        assert (entry["label"], entry["problem"], entry["truth"], entry["adversary"], entry["verdict"]) == (
            row.label, row.problem, row.truth, row.adversary, row.verdict)  # fmt: skip
        assert entry["honest_win"]["successes"] == row.honest_win.successes and entry["trials"] == row.trials
    (json_rates,) = [plot["series"] for plot in listed["plots"] if plot["file"] == "rates.png"]
    assert [tuple(e["key"]) for e in json_rates] == list(rates)
    for entry in json_rates:
        for truth, line in entry["value"].items():
            pooled = rates[tuple(entry["key"])][truth]
            assert line["honest_win"]["successes"] == pooled.honest_win.successes
            assert (line["accept"] is None) == (pooled.accept is None) and line["no_accept"] == pooled.no_accept


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (apt-get install -y chromium)")
def test_demo_report_at_desktop_size_in_chromium(demo: tuple[dict, Path]) -> None:
    """The runs table was wider than the page. At desktop size (1440 by 900) nothing is cut at the
    page's edge, the table fits its box, and every plot is drawn at its own width; screenshots of the
    page, the table and each plot go to test-artifacts/report-*.png (kept by CI)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    _, folder = demo
    ARTIFACTS.mkdir(exist_ok=True)
    suffix = f"-{WORKER}" if WORKER else ""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto((folder / REPORT_FILE).resolve().as_uri())
            page.screenshot(path=ARTIFACTS / f"report-page{suffix}.png")
            view = page.evaluate("() => window.innerWidth")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= view
            images = page.evaluate("() => [...document.images].map(i => [i.alt, i.naturalWidth, "
                                   "i.clientWidth, i.getBoundingClientRect().right])")  # fmt: skip
            assert sorted(alt for alt, *_ in images) == sorted(
                page.locator(f'[id="{name}"] h3').inner_text() for name in DEMO_PLOTS
            )
            for alt, natural, width, right in images:
                assert natural == 800 and width == 800 and right <= view, alt
            box = page.locator(".table-wrap", has=page.locator("#runs"))
            scroll, client, right = box.evaluate("b => [b.scrollWidth, b.clientWidth, b.getBoundingClientRect().right]")
            assert scroll <= client and right <= view
            headers = page.locator("#runs th").all_inner_texts()
            assert "holds" in headers and len(page.locator("#runs tbody tr").all()) == len(
                plots.table(from_demo(demo[0]))
            )
            box.screenshot(path=ARTIFACTS / f"report-runs-table{suffix}.png")
            for figure in page.locator("figure").all():
                name = figure.get_attribute("id").removesuffix(".png")
                figure.screenshot(path=ARTIFACTS / f"report-{name}{suffix}.png")
        finally:
            browser.close()


def test_the_accept_promise_is_the_bound_on_the_truths_side_and_none_where_vacuous():
    """One rule for the report's rows and a dataset's items: at least c on yes, at most s on no,
    nothing where c = 0 or s = 1; an interval reaches it at its top on yes, at its bottom on no,
    touching included."""
    from debatekit.analysis.stats import accept_promise, reaches

    assert accept_promise(True, 0.9, 0.1) == 0.9 and accept_promise(False, 0.9, 0.1) == 0.1
    assert accept_promise(True, 0.0, 0.1) is None and accept_promise(False, 0.9, 1.0) is None
    assert accept_promise(True, None, 0.1) is None and accept_promise(False, 0.9, None) is None
    assert reaches(True, 0.9, (0.5, 0.9)) and not reaches(True, 0.9, (0.5, 0.89))
    assert reaches(False, 0.1, (0.1, 0.5)) and not reaches(False, 0.1, (0.11, 0.5))
