"""The command line contract (DESIGN.md "Command line contract"), called in-process through
``debatekit.cli.main.main`` and, for the no-traceback promise, once or twice as the installed
``debatekit`` executable.

Cross-examination (Theorem 5.3) and bisection (Theorem 5.1) promise completeness 1 and
soundness 0 with at most one verifier query, so against every built-in adversary the honest side
must win every debate: those checks are exact, not statistical.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from debatekit.analysis.montecarlo import make_instance
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS
from debatekit.problems.dataset import SHIPPED, load
from debatekit.protocols.registry import PROTOCOLS, protocols_of

HERE = Path(__file__).resolve().parent

JSON_FIELDS = {
    "protocol": str,
    "problem": str,
    "truth": str,
    "trials": int,
    "accept_rate": float,
    "accept_ci": list,
    "honest_win_rate": float,
    "verifier_queries_max": int,
    "verifier_queries_mean": float,
    "verifier_bits_read_max": int,
    "alice_queries_mean": float,
    "bob_queries_mean": float,
}
PLAYER_LINE = re.compile(r"^(alice|bob) +(\S+) {2,}(\S.*)$")


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Internal errors must be reported, not raised, whatever the developer's shell sets."""
    monkeypatch.delenv("DEBATEKIT_DEBUG", raising=False)


@pytest.fixture
def user_path(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make ``tests/user_strategies.py`` importable as ``user_strategies``; returns the module name."""
    monkeypatch.syspath_prepend(str(HERE))
    return "user_strategies"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command line in-process: (exit status, stdout, stderr)."""
    capsys.readouterr()  # drop anything printed before
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_json(out: str) -> dict:
    """stdout must be exactly one JSON object on one line."""
    assert out.endswith("\n") and out.count("\n") == 1, out
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = cli(capsys, "run", *argv, "--json")
    assert code == 0, err
    assert "Traceback" not in err
    return one_json(out)


def assert_usage_error(code: int, out: str, err: str) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.startswith("debatekit: error: "), err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err


def assert_guarantee_holds(data: dict) -> None:
    """The theorem's promise on one run. Deterministic protocols (c = 1, s = 0): the honest side
    always wins with at most one verifier query. Stochastic ones: the accept rate's 95% interval
    is consistent with the promised completeness or soundness. Always within the budgets."""
    g = data["guarantee"]
    if g["completeness"] == 1.0 and g["soundness"] == 0.0:
        assert data["honest_win_rate"] == 1.0
        assert data["accept_rate"] == (1.0 if data["truth"] == "yes" else 0.0)
        assert data["verifier_queries_max"] <= 1
    elif data["truth"] == "yes":
        assert data["accept_ci"][1] >= g["completeness"]
    else:
        assert data["accept_ci"][0] <= g["soundness"]
    assert data["verifier_queries_max"] <= g["verifier_queries"]
    assert data["verifier_bits_read_max"] <= g["bits_read"]


def _acceptance_cases() -> list[tuple[str, str, int | None, str, str, str]]:
    """(protocol, problem, size, truth, role, strategy): every strategy of the dishonest role,
    i.e. every Bob when the truth is yes and every Alice when it is no."""
    cases = []
    for protocol, problem, size in (
        ("cross-exam", "majority", 1024),
        ("bisection", "parity", None),
        ("bisection", "palindrome", None),
    ):
        for truth, role in (("yes", Role.BOB), ("no", Role.ALICE)):
            names = PROTOCOLS[protocol].strategies[role]
            cases += [(protocol, problem, size, truth, role.value, name) for name in names]
    return cases


@pytest.mark.parametrize(("protocol", "problem", "size", "truth", "role", "name"), _acceptance_cases())
def test_honest_side_wins_against_every_builtin_adversary(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: int | None, truth: str, role: str, name: str
) -> None:
    argv = [protocol, "--problem", problem, "--truth", truth, f"--{role}", name, "--trials", "5"]
    data = run_json(capsys, *argv, *(["--size", str(size)] if size else []))
    assert (data["protocol"], data["problem"], data["truth"], data[role]) == (protocol, problem, truth, name)
    if size:
        assert data["size"] == size
    assert data["trials"] == 5
    assert_guarantee_holds(data)


@pytest.mark.parametrize(
    ("protocol", "problem"), [(p, name) for name, problem in PROBLEMS.items() for p in protocols_of(problem)]
)
@pytest.mark.parametrize("truth", ["yes", "no"])
def test_every_problem_runs_honest_against_honest(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, truth: str
) -> None:
    """Every registered problem, on every protocol it claims, at its default size. Where a built-in
    honest strategy refuses the instance (Algorithm 1 at q = 34), the run is a one-line usage
    error, and the first strategy that accepts plays instead."""
    argv = [protocol, "--problem", problem, "--truth", truth, "--trials", "2"]
    spec = PROTOCOLS[protocol]
    case = make_instance(PROBLEMS[problem], PROBLEMS[problem].default_size, truth == "yes", 0)
    honest_bob = spec.strategies[Role.BOB]["honest"]
    if honest_bob.refuses is not None and honest_bob.refuses(case):
        code, out, err = cli(capsys, "run", *argv)
        assert_usage_error(code, out, err)
        accepts = [s for s in spec.strategies[Role.BOB].values() if s.refuses is None or not s.refuses(case)]
        argv += ["--bob", accepts[0].name]
    data = run_json(capsys, *argv)
    assert data["size"] == PROBLEMS[problem].default_size
    assert_guarantee_holds(data)


def test_json_has_the_contract_fields(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "cross-exam", "--problem", "parity", "--size", "32", "--truth", "no", "--trials", "5")
    for name, kind in JSON_FIELDS.items():
        assert name in data, name
        assert isinstance(data[name], kind), (name, data[name])
    assert (data["protocol"], data["problem"], data["truth"], data["trials"]) == ("cross-exam", "parity", "no", 5)
    low, high = data["accept_ci"]
    assert 0.0 <= low <= data["accept_rate"] <= high <= 1.0
    assert high > 0.0  # 0 of 5 cannot rule out every positive accept rate at 95%
    assert data["verifier_queries_mean"] <= data["verifier_queries_max"]
    assert data["verifier_bits_read_max"] <= data["guarantee"]["bits_read"]


def test_accept_rate_interval_covers_the_known_probability(capsys: pytest.CaptureFixture[str]) -> None:
    """Alice flips only the output bit; Bob names a uniform step; V rejects iff he names the
    output step, so P[accept] = 1 - 1/T exactly. The 95% interval must cover it."""
    data = run_json(
        capsys,
        *("cross-exam", "--problem", "parity", "--size", "4", "--truth", "no"),
        *("--alice", "lie-output", "--bob", "point-random", "--trials", "400", "--seed", "7"),
    )
    low, high = data["accept_ci"]
    assert low <= 1 - 1 / data["T"] <= high
    assert low <= data["accept_rate"] <= high
    assert data["honest_win_rate"] == pytest.approx(1 - data["accept_rate"])


def test_text_run_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", "16", "--trials", "3")
    assert code == 0, err
    assert "accept rate" in out and "bits read" in out
    assert "Traceback" not in err


def test_same_seed_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "cross-exam", "--problem", "parity", "--size", "64", "--truth", "no"]
    argv += ["--alice", "lie-step", "--bob", "point-random", "--trials", "20", "--seed", "3", "--json"]
    first, second = cli(capsys, *argv), cli(capsys, *argv)
    assert first[0] == second[0] == 0
    assert first[1] == second[1]


def test_different_seeds_can_differ(capsys: pytest.CaptureFixture[str]) -> None:
    """A random adversary's ledger depends on the seed (which step it names, hence the bits V reads)."""
    means = {
        run_json(
            capsys,
            *("cross-exam", "--problem", "majority", "--size", "256", "--bob", "point-random"),
            *("--trials", "20", "--seed", str(seed)),
        )["verifier_bits_read_mean"]
        for seed in range(4)
    }
    assert len(means) > 1, means


def test_problems_lists_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "problems")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(PROBLEMS) + len(SHIPPED)
    names = [line.split()[0] for line in lines]
    assert names == [*PROBLEMS, *SHIPPED]  # the problems, then the shipped datasets
    assert all("a dataset of" in line for line in lines[len(PROBLEMS) :])
    assert {"parity", "majority", "palindrome", "sat-witness"} <= set(names)


def test_problems_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "problems", "--json")
    assert code == 0, err
    listed = {p["name"]: p for p in one_json(out)["problems"]}
    assert set(listed) == set(PROBLEMS)
    for name, p in listed.items():
        assert tuple(p["protocols"]) == protocols_of(PROBLEMS[name])
    datasets = {d["name"]: (d["items"], d["decomposed"]) for d in one_json(out)["datasets"]}
    read = {name: load(file) for name, file in SHIPPED.items()}
    assert datasets == {name: (len(items), sum(bool(i.steps) for i in items)) for name, items in read.items()}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_players_lists_role_name_description(capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    code, out, err = cli(capsys, "players", protocol)
    assert code == 0, err
    rows = []
    for line in out.splitlines():
        match = PLAYER_LINE.match(line)
        assert match, line
        rows.append(match.groups())
    strategies = PROTOCOLS[protocol].strategies
    models = {(r, f"{kind}:PROVIDER/MODEL") for r in ("alice", "bob") for kind in ("llm", "llm-liar")}
    built_in = {(r.value, n) for r in strategies for n in strategies[r]}
    assert {(role, name) for role, name, _ in rows} == built_in | (models if PROTOCOLS[protocol].llm else set())
    assert len(rows) == len(built_in) + (len(models) if PROTOCOLS[protocol].llm else 0)
    for role, name, description in rows:
        if (role, name) in built_in:
            assert description == strategies[Role(role)][name].description
    for role in ("alice", "bob"):
        assert sum(r == role and n != "honest" for r, n, _ in rows) >= 4
        assert (role, "honest") in {(r, n) for r, n, _ in rows}


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_players_json(capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    code, out, err = cli(capsys, "players", protocol, "--json")
    assert code == 0, err
    data = one_json(out)
    assert data["protocol"] == protocol
    strategies = PROTOCOLS[protocol].strategies
    expected = {(r.value, n) for r in strategies for n in strategies[r]}
    if PROTOCOLS[protocol].llm:  # its LLM players by name (the llm extra)
        expected |= {(r, f"{kind}:PROVIDER/MODEL") for r in ("alice", "bob") for kind in ("llm", "llm-liar")}
    assert {(p["role"], p["name"]) for p in data["players"]} == expected


@pytest.mark.parametrize(
    ("protocol", "problem", "size", "truth"),
    [
        ("cross-exam", "parity", 3, "no"),
        ("cross-exam", "parity", 3, "yes"),
        ("cross-exam", "majority", 3, "no"),
        ("bisection", "parity", 1, "yes"),
        ("bisection", "parity", 1, "no"),
    ],
)
def test_solve_exact_value(
    capsys: pytest.CaptureFixture[str], protocol: str, problem: str, size: int, truth: str
) -> None:
    code, out, err = cli(capsys, "solve", protocol, "--problem", problem, "--size", size, "--truth", truth, "--json")
    assert code == 0, err
    data = one_json(out)
    assert (data["protocol"], data["problem"], data["size"], data["truth"]) == (protocol, problem, size, truth)
    assert data["honest"] == ("alice" if truth == "yes" else "bob")
    assert data["adversary"] == ("bob" if truth == "yes" else "alice")
    assert data["value"] == 1.0
    assert data["exact"] == "1"
    assert data["value"] >= data["guarantee"]
    assert data["positions"] >= 1


def test_solve_text_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "solve", "cross-exam", "--problem", "parity", "--size", "3", "--truth", "no")
    assert code == 0, err
    assert out.count("\n") == 1
    assert "probability 1" in out


def test_solve_over_budget_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "solve", "cross-exam", "--problem", "parity", "--size", "3", "--budget", "1")
    assert_usage_error(code, out, err)


def test_demo_quick_writes_its_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "report"
    code, out, err = cli(capsys, "demo", "--quick", "--json", "--out", folder, "--no-log", "--progress")
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("demo debates ")]  # stderr is no terminal here
    assert lines and lines[-1].endswith("0:00:00 left") and all(" elapsed, " in line for line in lines)
    data = one_json(out)
    assert data["all_guarantees_hold"] is True
    assert Path(data["report"]) == folder
    assert data["rows"] and all(row["holds"] for row in data["rows"])
    played = {row["protocol"] for row in data["rows"]} | {row["protocol"] for row in data["prover_estimator"]}
    assert played == set(PROTOCOLS)
    assert all(row["holds"] is not False for row in data["prover_estimator"])
    assert data["reward_gap"] and all(g["pe_gap"] > 0 for g in data["reward_gap"])
    for name in ("report.html", "report.md", "results.json", "bits_read.png", "reward_gap.png"):
        assert (folder / name).stat().st_size > 0, name
        if name.endswith(".png"):
            assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((folder / "results.json").read_text())["all_guarantees_hold"] is True


def test_the_demos_summary_line_counts_what_holds_counts() -> None:
    from types import SimpleNamespace as Part

    from debatekit.experiments.demo import nothing

    rows = [Part(holds=True)] * 5 + [Part(holds=False)]
    exact = [Part(value=1.0, guarantee=1.0, protocol="cross-exam", problem="parity"),
             Part(value=0.7, guarantee=0.64, protocol="stochastic", problem="noisy-majority")]  # fmt: skip
    payoffs = [Part(protocol="prover-estimator", holds=held) for held in (True, True, None, False)]
    payoffs.append(Part(protocol="naive-recursive", holds=True))
    result = replace(nothing(0), rows=rows, exact=exact, payoffs=payoffs)
    line = result.summary("out/report.html")
    assert not result.holds
    assert line == ("12 guarantees checked: 10 held, 2 failed; exact: 2 of 2 at their guarantee (lowest 0.700: "
                    "stochastic, noisy-majority); prover-estimator: 2 of 3 promised bounds hold (1 rows no promise); "
                    "report: out/report.html")  # fmt: skip
    assert replace(nothing(0), interrupted=True).summary("r.json").startswith("INTERRUPTED: 0 guarantees checked")


@pytest.mark.parametrize(
    ("argv", "mentions"),
    [
        (["run", "nope", "--problem", "parity"], "nope"),
        (["solve", "nope", "--problem", "parity"], "nope"),
        (["players", "nope"], "nope"),
        (["frobnicate"], "frobnicate"),
        (["run", "cross-exam", "--problem", "nope"], "nope"),
        (["run", "cross-exam"], "--problem"),
        (["run", "cross-exam", "--problem", "palindrome"], "palindrome"),
        (["run", "bisection", "--problem", "majority"], "majority"),
        (["solve", "cross-exam", "--problem", "palindrome"], "palindrome"),
        (["run", "cross-exam", "--problem", "parity", "--bob", "nope"], "nope"),
        (["run", "bisection", "--problem", "parity", "--alice", "nope"], "nope"),
        (["run", "cross-exam", "--problem", "parity", "--bob", "no_such_module_xyz:Bob"], "no_such_module_xyz"),
        (["run", "cross-exam", "--problem", "parity", "--bob", "debatekit:no_such_attr"], "no_such_attr"),
        (["run", "cross-exam", "--problem", "parity", "--bob", "math:pi"], "math:pi"),
        (["run", "cross-exam", "--problem", "parity", "--bob", ":"], ":"),
        (["run", "cross-exam", "--problem", "parity", "--size", "abc"], "--size"),
        (["run", "cross-exam", "--problem", "parity", "--size", "0"], "--size"),
        (["run", "cross-exam", "--problem", "parity", "--trials", "0"], "--trials"),
        (["run", "cross-exam", "--problem", "parity", "--trials", "-3"], "--trials"),
        (["run", "cross-exam", "--problem", "parity", "--trials", "1.5"], "--trials"),
        (["run", "cross-exam", "--problem", "parity", "--seed", "abc"], "--seed"),
        (["run", "cross-exam", "--problem", "parity", "--seed", "-1"], "--seed"),
        (["solve", "cross-exam", "--problem", "parity", "--size", "3", "--seed", "-1"], "--seed"),
        (["demo", "--quick", "--seed", "-1"], "--seed"),
        (["run", "cross-exam", "--problem", "parity", "--frobnicate"], "--frobnicate"),
        (["run", "cross-exam", "--problem", "parity", "--truth", "maybe"], "maybe"),
        (["run", "bisection", "--problem", "palindrome", "--size", "1", "--truth", "no"], "--size"),
        (["run", "cross-exam", "--problem", "sat-witness", "--size", "2"], "--size"),
        (["solve", "cross-exam", "--problem", "parity", "--size", "3", "--budget", "0"], "--budget"),
        (["solve", "cross-exam", "--problem", "sat-witness", "--size", "2"], "--size"),
    ],
)
def test_user_mistakes_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], mentions: str
) -> None:
    code, out, err = cli(capsys, *argv)
    assert_usage_error(code, out, err)
    assert mentions in err


def test_user_strategy_is_used_and_reported(capsys: pytest.CaptureFixture[str], user_path: str) -> None:
    """A user Bob that accepts everything loses to a lying Alice; built-in honest Bob would not."""
    calls = importlib.import_module(user_path).CALLS
    before = calls["AcceptingBob"]
    name = f"{user_path}:AcceptingBob"
    data = run_json(
        capsys,
        *("cross-exam", "--problem", "parity", "--size", "16", "--truth", "no"),
        *("--alice", "lie-output", "--bob", name, "--trials", "4", "--trust-players"),
    )
    assert data["bob"] == name
    assert calls["AcceptingBob"] - before == 4  # inline, on the user's word: its calls counted here
    assert data["accept_rate"] == 1.0 and data["honest_win_rate"] == 0.0
    assert data["forfeits"] == {"alice": 0, "bob": 0}
    assert data["boundary"] == {"alice": "built-in", "bob": "inline: --trust-players, boundary off"}
    isolated = run_json(capsys, *("cross-exam", "--problem", "parity", "--size", "16", "--truth", "no"),
                        *("--alice", "lie-output", "--bob", name, "--trials", "4"))  # fmt: skip
    assert calls["AcceptingBob"] - before == 4  # in its workers: none here
    assert isolated["boundary"] == {"alice": "built-in", "bob": "worker"}
    assert (isolated["accept_rate"], isolated["honest_win_rate"], isolated["forfeits"]) == (1.0, 0.0, data["forfeits"])


def test_user_strategy_in_the_text_table(capsys: pytest.CaptureFixture[str], user_path: str) -> None:
    code, out, err = cli(
        capsys, "run", "cross-exam", "--problem", "parity", "--size", "8", "--bob", f"{user_path}:AcceptingBob"
    )
    assert code == 0, err
    assert f"{user_path}:AcceptingBob" in " ".join(out.split())
    assert "boundary off" not in out
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", "8", "--bob",
                         f"{user_path}:AcceptingBob", "--trust-players")  # fmt: skip
    assert code == 0, err
    assert "bob: inline: --trust-players, boundary off" in " ".join(out.split())


@pytest.mark.parametrize(
    ("role", "attr", "truth", "other", "reason"),
    [
        ("bob", "CrashingBob", "no", ("--alice", "lie-output"), "RuntimeError: user bob crashed"),
        ("bob", "crashing_factory", "no", ("--alice", "lie-output"), "ValueError: cannot sit down"),
        ("alice", "CrashingAlice", "yes", (), "ZeroDivisionError: user alice crashed"),
    ],
)
def test_user_strategy_that_raises_forfeits(
    capsys: pytest.CaptureFixture[str], user_path: str, role: str, attr: str, truth: str, other: tuple, reason: str
) -> None:
    """Untrusted code that raises loses the debate: the verdict goes to the other side, whatever
    the truth, and the run still succeeds with a note on stderr."""
    argv = ["run", "cross-exam", "--problem", "parity", "--size", "16", "--truth", truth, *other]
    code, out, err = cli(capsys, *argv, f"--{role}", f"{user_path}:{attr}", "--trials", "3", "--json")
    assert code == 0, err
    data = one_json(out)
    assert data["forfeits"][role] == 3
    assert data["accept_rate"] == (1.0 if role == "bob" else 0.0)  # Alice argues for 1, Bob for 0
    assert data["honest_win_rate"] == 0.0  # the crashing side was the one the truth favoured
    note = " ".join(err.split())
    assert f"note: {role} forfeited 3 of 3 debates" in note
    assert reason in note
    assert "Traceback" not in err


def test_user_attr_that_is_not_callable(capsys: pytest.CaptureFixture[str], user_path: str) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--bob", f"{user_path}:NOT_CALLABLE")
    assert_usage_error(code, out, err)
    assert "not callable" in err


def test_user_module_without_the_attr(capsys: pytest.CaptureFixture[str], user_path: str) -> None:
    code, out, err = cli(capsys, "run", "cross-exam", "--problem", "parity", "--alice", f"{user_path}:NoSuchAlice")
    assert_usage_error(code, out, err)
    assert "NoSuchAlice" in err


# The installed executable: what a user's shell sees.

EXECUTABLE = shutil.which("debatekit") or (
    str(Path(sys.executable).with_name("debatekit")) if Path(sys.executable).with_name("debatekit").exists() else None
)
needs_executable = pytest.mark.skipif(EXECUTABLE is None, reason="the debatekit executable is not installed")


def shell(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DEBATEKIT_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    assert EXECUTABLE is not None
    return subprocess.run([EXECUTABLE, *argv], capture_output=True, text=True, env=env, timeout=120)


@needs_executable
def test_executable_usage_error_has_no_traceback() -> None:
    done = shell("run", "cross-exam", "--problem", "parity", "--size", "abc")
    assert_usage_error(done.returncode, done.stdout, done.stderr)
    assert "--size" in done.stderr


@needs_executable
def test_executable_user_strategy_that_raises() -> None:
    done = shell(
        *("run", "cross-exam", "--problem", "parity", "--size", "16", "--truth", "no", "--alice", "lie-output"),
        *("--bob", "user_strategies:CrashingBob", "--trials", "3", "--json"),
    )
    assert done.returncode == 0, done.stderr
    data = one_json(done.stdout)
    assert data["bob"] == "user_strategies:CrashingBob"
    assert data["forfeits"]["bob"] == 3 and data["accept_rate"] == 1.0
    assert "bob forfeited 3 of 3" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["lipschitz", "--problem", "noisy-majority"],
        ["problems"],
        ["players", "stochastic"],
        ["plan", "--T", "100", "--K", "1"],
        ["dqc", "--n", "2"],
    ],
)
def test_each_command_runs_in_a_fresh_interpreter(argv) -> None:
    """A command's own imports, first in a process (an import cycle shows only there)."""
    code = "import sys; from debatekit.cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
