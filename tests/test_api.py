"""The Python API (issue 13, point 5): ``debatekit.run``, ``solve``, ``plan`` and ``sweep`` take what
their commands take, by name and with the same defaults, and return objects whose ``to_json()`` is
what the command's ``--json`` prints; a mistake is a ``UsageError`` (a ``ValueError``), never output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import debatekit
from debatekit.api import UsageError
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.players.base import Seat
from debatekit.protocols.cross_exam import ACCEPT


def cli_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict[str, Any]:
    """The command's ``--json`` object, run in-process."""
    capsys.readouterr()
    code = main([*(str(a) for a in argv), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def as_json(result: Any) -> dict[str, Any]:
    """``result.to_json()`` as it would print (tuples as lists, numpy scalars as numbers)."""
    return json.loads(json.dumps(result.to_json(), default=lambda v: v.item()))


def test_run_is_what_run_json_prints(capsys: pytest.CaptureFixture[str]) -> None:
    result = debatekit.run("cross-exam", problem="majority", size=1024, truth=True, bob="point-random", trials=200,
                           seed=0)  # fmt: skip
    assert isinstance(result, debatekit.RunResult)
    printed = cli_json(capsys, "run", "cross-exam", "--problem", "majority", "--size", 1024, "--truth", "yes",
                       "--bob", "point-random", "--trials", 200, "--seed", 0, "--no-log")  # fmt: skip
    assert as_json(result) == printed
    assert result.honest_win_rate == 1.0 and result.bob == "point-random"


def test_run_params_constants_and_truth_as_the_command_line_takes_them(capsys: pytest.CaptureFixture[str]) -> None:
    result = debatekit.run("prover-estimator", problem="obfuscated-primality", size=8, truth="no", params={"q": 2},
                           trials=20, seed=3)  # fmt: skip
    printed = cli_json(capsys, "run", "prover-estimator", "--problem", "obfuscated-primality", "--size", 8,
                       "--truth", "no", "-P", "q=2", "--trials", 20, "--seed", 3, "--no-log")  # fmt: skip
    assert as_json(result) == printed
    assert printed["params"]["q"] == 2 and result.truth == "no"
    stochastic = debatekit.run("stochastic", problem="noisy-majority", constants="lean", trials=50, truth=False)
    printed = cli_json(capsys, "run", "stochastic", "--problem", "noisy-majority", "--constants", "lean",
                       "--trials", 50, "--truth", "no", "--no-log")  # fmt: skip
    assert as_json(stochastic) == printed


def test_run_defaults_are_the_command_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert as_json(debatekit.run("cross-exam", problem="parity")) == cli_json(
        capsys, "run", "cross-exam", "--problem", "parity", "--no-log"
    )


def test_run_keeps_a_record_file(tmp_path: Path) -> None:
    record = tmp_path / "debates.jsonl"
    result = debatekit.run("cross-exam", problem="parity", size=8, bob="point-random", trials=7, record=record)
    lines = record.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + result.trials == 1 + 7  # the run's header, then one line per debate
    assert json.loads(lines[0])["header"]["protocol"] == "cross-exam"
    assert {json.loads(line)["debate"] for line in lines[1:]} == set(range(7))


def test_run_refuses_an_existing_record_unless_told(tmp_path: Path) -> None:
    """As ``--record`` needs ``--overwrite`` or ``--resume``: the file is left as it was."""
    record = tmp_path / "debates.jsonl"
    record.write_text("mine\n", encoding="utf-8")
    with pytest.raises(UsageError, match="exists"):
        debatekit.run("cross-exam", problem="parity", size=8, trials=3, record=record)
    assert record.read_text(encoding="utf-8") == "mine\n"
    result = debatekit.run("cross-exam", problem="parity", size=8, trials=3, record=record, overwrite=True)
    assert len(record.read_text(encoding="utf-8").splitlines()) == 1 + result.trials == 4
    resumed = debatekit.run("cross-exam", problem="parity", size=8, trials=5, record=record, resume=True)
    assert resumed.trials == 5 and len(record.read_text(encoding="utf-8").splitlines()) == 6


class StubbornBob:
    """Always challenge the first step."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: Any) -> int:
        return 0


def accepting_bob(seat: Seat) -> Any:
    """A factory function: a Bob that accepts every transcript."""

    class Accept:
        def challenge(self, message: Any) -> None:
            return ACCEPT

    return Accept()


def test_players_as_names_classes_factories_and_strategies() -> None:
    by_class = debatekit.run("cross-exam", problem="parity", size=8, bob=StubbornBob, trials=10)
    assert by_class.bob == f"{__name__}:StubbornBob" and by_class.honest_win_rate == 1.0
    by_function = debatekit.run("cross-exam", problem="parity", size=8, truth=False, alice="lie-output",
                                bob=accepting_bob, trials=10)  # fmt: skip
    assert by_function.accept_rate == 1.0 and by_function.honest_win_rate == 0.0  # this Bob lets a lie through
    strategy = debatekit.PROTOCOLS["cross-exam"].strategies[Role.BOB]["point-random"]
    assert debatekit.run("cross-exam", problem="parity", size=8, bob=strategy, trials=10).bob == "point-random"
    by_path = debatekit.run("cross-exam", problem="parity", size=8, bob="tests.user_strategies:AcceptingBob", trials=3)
    assert by_path.bob == "tests.user_strategies:AcceptingBob"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: debatekit.run("nope", problem="parity"), "unknown protocol 'nope'"),
        (lambda: debatekit.run("cross-exam", problem="nope"), "unknown problem 'nope'"),
        (lambda: debatekit.run("cross-exam", problem="parity", bob="nope"), "unknown bob strategy 'nope'"),
        (lambda: debatekit.run("cross-exam", problem="parity", params={"q": 2}), "unknown parameter 'q'"),
        (lambda: debatekit.run("prover-estimator", problem="obfuscated-primality", params={"q": "x"}), "takes int"),
        (lambda: debatekit.run("cross-exam", problem="parity", truth="maybe"), "truth must be"),
        (lambda: debatekit.run("cross-exam", problem="parity", trials=0), "--trials must be at least 1"),
        (lambda: debatekit.run("cross-exam", problem="parity", seed=-1), "seed must be at least 0"),
        (lambda: debatekit.run("cross-exam", problem="parity", constants="lean"), "--constants applies"),
        (lambda: debatekit.run("cross-exam", problem="parity", alice=42), "42 is not a strategy"),
        (
            lambda: debatekit.run(
                "cross-exam", problem="parity", alice=debatekit.PROTOCOLS["cross-exam"].strategies[Role.BOB]["honest"]
            ),
            "plays bob",
        ),
        (lambda: debatekit.solve("cross-exam", problem="parity", budget=0), "--budget must be at least 1"),
        (lambda: debatekit.plan(-1, 10), "--K must be a positive number"),
        (lambda: debatekit.plan(4, 10, proof="nope"), "proof direct or lean"),
        (lambda: debatekit.sweep({"protocol": "nope", "problem": "parity"}, out="x"), "unknown protocol"),
        (lambda: debatekit.sweep({"protocol": "cross-exam", "problem": "parity"}), "needs --out"),
        (
            lambda: debatekit.sweep({"protocol": "cross-exam", "problem": "parity"}, out="x", overrides=["q=2"]),
            "unknown parameter 'q'",
        ),
        (lambda: debatekit.sweep("grid.toml", backend="cloud"), "backend must be local or ray"),
    ],
)
def test_a_mistake_is_a_usage_error_and_prints_nothing(
    call: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match=message) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    assert "\n" not in str(raised.value)
    assert capsys.readouterr() == ("", "")


def test_solve_is_what_solve_json_prints(capsys: pytest.CaptureFixture[str]) -> None:
    one = debatekit.solve("cross-exam", problem="parity", size=3, truth="no", seed=2)
    assert as_json(one) == cli_json(capsys, "solve", "cross-exam", "--problem", "parity", "--size", 3, "--truth", "no",
                                     "--seed", 2)  # fmt: skip
    assert one.solution.value == 1.0
    every = debatekit.solve("kw", problem="equality", size=2, all_inputs=True)
    assert as_json(every) == cli_json(capsys, "solve", "kw", "--problem", "equality", "--size", 2, "--all-inputs")
    assert len(every.cases) == 4 and every.all_hold


def test_plan_is_what_plan_json_prints(capsys: pytest.CaptureFixture[str]) -> None:
    planned = debatekit.plan(4, 100, completeness=0.55, prover_budget=10**6, proof="lean")
    printed = cli_json(capsys, "plan", "--K", 4, "--T", 100, "--completeness", 0.55, "--prover-budget", 10**6,
                       "--proof", "lean")  # fmt: skip
    assert as_json(planned) == printed
    assert as_json(debatekit.plan(4, 100, constants="paper")) == cli_json(
        capsys, "plan", "--K", 4, "--T", 100, "--constants", "paper"
    )


GRID = """
trials = 5
truth = ["yes", "no"]
protocol = "cross-exam"
problem = "parity"
size = 8
bob = ["honest", "point-random"]
"""


def without_paths(data: dict[str, Any]) -> dict[str, Any]:
    """A sweep's JSON without its timings and paths (fields ending in ``_s`` or ``_path``)."""
    plain = {key: value for key, value in data.items() if not key.endswith(("_s", "_path"))}
    plain["results"] = [{k: v for k, v in row.items() if not k.endswith(("_s", "_path"))} for row in data["results"]]
    return plain


def test_sweep_of_a_table_is_the_sweep_of_its_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import tomllib

    (tmp_path / "grid.toml").write_text(GRID, encoding="utf-8")
    result = debatekit.sweep(tomllib.loads(GRID), out=tmp_path / "api", workers=1)
    printed = cli_json(capsys, "sweep", tmp_path / "grid.toml", "--out", tmp_path / "cli", "--workers", 1)
    assert result.cells == result.ran == 4 and result.skipped == 0
    assert without_paths(as_json(result)) == without_paths(printed)
    again = debatekit.sweep(tmp_path / "grid.toml", out=tmp_path / "api", workers=2)
    assert (again.ran, again.skipped) == (0, 4)  # the same cells: finished already
    half = debatekit.sweep(str(tmp_path / "grid.toml"), out=tmp_path / "half", workers=1, shard="1/2")
    assert (half.ran, len(half.results)) == (2, 2)


def test_top_level_names() -> None:
    from debatekit import api
    from debatekit.analysis import exact, montecarlo

    assert (debatekit.run, debatekit.solve, debatekit.plan, debatekit.sweep) == (api.run, api.solve, api.plan,
                                                                                  api.sweep)  # fmt: skip
    assert debatekit.UsageError is UsageError
    assert montecarlo.run is not debatekit.run and exact.solve is not debatekit.solve
    assert {"run", "solve", "plan", "sweep", "UsageError"} <= set(dir(debatekit))


def test_importing_debatekit_and_its_api_stays_light() -> None:
    script = (
        "import sys, debatekit\n"
        "before = [m for m in sys.modules if m.startswith(('numpy', 'debatekit.api'))]\n"
        "debatekit.run, debatekit.sweep\n"
        "after = [m for m in sys.modules if m.startswith(('numpy', 'scipy', 'debatekit.analysis'))]\n"
        "print(before, after)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[] []"


# ---- objects where the command line takes names (issue 21): each played, each described as an object


def test_a_users_oracle_object_decides_the_verdict(tmp_path: Path) -> None:
    """approval-majority's items judged by a TableOracle that approves everything (or nothing): the
    honest players' transcript, and so the verdict, follow the oracle given, whatever the instance's
    own judgements say; the record says the verifier asked another oracle than the instance's."""
    from debatekit.oracle import TableOracle

    approves = debatekit.run("cross-exam", problem="approval-majority", size=9, truth=False,
                             oracle=TableOracle({}, 1.0), trials=5)  # fmt: skip
    assert approves.accept_rate == 1.0 and approves.trials == 5
    record = tmp_path / "debates.jsonl"
    rejects = debatekit.run("cross-exam", problem="approval-majority", size=9, truth=True,
                            oracle=TableOracle({}, 0.0), trials=5, record=record)  # fmt: skip
    assert rejects.accept_rate == 0.0
    assert json.loads(record.read_text(encoding="utf-8").splitlines()[0])["header"]["oracle"] == "other"


def test_a_users_strategy_object_that_lies_loses_to_honest_bob() -> None:
    """A Strategy object of the user's (untrusted: its moves go through the boundary) whose Alice
    argues the false output: honest Bob catches it every time, and the result names it as an object."""
    from debatekit.players.base import Strategy

    lie = debatekit.PROTOCOLS["cross-exam"].strategies[Role.ALICE]["lie-output"]
    liar = Strategy("my-liar", Role.ALICE, "argues the false output", lambda seat: lie.factory(seat))
    with pytest.raises(UsageError, match=r"cannot be imported by name in a worker.*trust=True"):
        debatekit.run("cross-exam", problem="parity", size=8, truth=False, alice=liar, trials=10)
    result = debatekit.run("cross-exam", problem="parity", size=8, truth=False, alice=liar, trials=10, trust=True)
    assert result.honest_win_rate == 1.0 and result.accept_rate == 0.0
    assert result.alice == "<strategy object: my-liar>"  # not the name of a strategy it is not
    assert result.boundary["alice"] == "inline: --trust-players, boundary off"


def test_an_instance_built_by_hand_is_played_and_described() -> None:
    """An Instance made here, not by a problem: its size and truth are the run's; its x decides."""
    import numpy as np

    from debatekit.machine.circuit import parity_circuit
    from debatekit.problems import Instance

    odd = Instance("parity", 8, True, np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=np.uint8), machine=parity_circuit(8))
    result = debatekit.run("cross-exam", problem=odd, bob="point-random", trials=6)
    assert (result.accept_rate, result.honest_win_rate, result.size, result.truth) == (1.0, 1.0, 8, "yes")
    assert result.problem == "<instance object: parity>"
    with pytest.raises(UsageError, match="the instance given has size 8"):
        debatekit.run("cross-exam", problem=odd, size=16)


def test_objects_are_described_not_named_in_the_runs_json() -> None:
    """The one JSON form of a run (logs, sweeps, ``--json``) writes an object as a description, a
    factory by the ``module:qualname`` that names it, and reads back what it wrote."""
    from debatekit.oracle import TableOracle
    from debatekit.runs.prepare import prepare
    from debatekit.runs.spec import RunSpec, Truth

    spec = RunSpec("cross-exam", "parity", 8, Truth.no, StubbornBob, lambda seat: None, oracle=TableOracle({}, 0.0))
    data = spec.to_json()
    assert data["alice"] == f"{__name__}:StubbornBob"
    assert data["bob"].startswith("<factory object: ") and "<lambda>" in data["bob"]
    assert data["oracles"]["oracle"] == "<oracle object: TableOracle>"
    named = RunSpec("cross-exam", "parity", 8, Truth.no, "honest", "point-random", params=(("q", "2"),), seed=4)
    assert RunSpec.from_json(json.loads(json.dumps(named.to_json()))) == named
    played = prepare(RunSpec("cross-exam", "parity", bob=accepting_bob, oracle=TableOracle({}, 0.0))).run
    assert (played.size, played.bob, played.to_json()["oracles"]["oracle"]) == (
        64,
        f"{__name__}:accepting_bob",
        "<oracle object: TableOracle>",
    )
