"""Declared parameters (``-P NAME=VALUE``, :mod:`debatekit.params`): parsing and validation, and
that the values reach the problem's instance and the protocol, as the JSON of a run shows."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from debatekit.catalog import ProverEstimatorParams
from debatekit.cli.main import main
from debatekit.params import Bounds, NoParams, ParamError, bind, bind_everywhere, declared, param
from debatekit.problems import PROBLEMS
from debatekit.problems.obfuscated_primality import DIVISION_BUDGET, LEAF, WIDTH, PrimalityParams
from debatekit.protocols.prover_estimator import COARSE_DELTA
from debatekit.protocols.registry import PROTOCOLS, protocols_of
from debatekit.protocols.stochastic.params import Constants


@dataclass(frozen=True)
class Example:
    n: int = param(3, "a count", low=1, high=9)
    p: float = param(0.5, "a probability", low=0, high=1, open_low=True)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = cli(capsys, "run", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_declared_reads_type_default_range_and_description() -> None:
    n, p = declared(Example)
    assert (n.name, n.kind, n.default, n.description) == ("n", int, 3, "a count")
    assert (p.kind, str(p.bounds)) == (float, "(0, 1]")
    assert declared(NoParams) == ()


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("n=abc", "takes int"),
        ("n=2.5", "takes int"),
        ("n=0", "must be in [1, 9]"),
        ("p=0", "must be in (0, 1]"),
        ("p=nan", "must be in"),
        ("p=inf", "must be in"),
        ("m=1", "unknown parameter 'm'"),
        ("n", "NAME=VALUE"),
        ("=1", "NAME=VALUE"),
    ],
)
def test_bind_refuses_bad_names_and_values(assignment: str, message: str) -> None:
    with pytest.raises(ParamError, match=message.replace("(", r"\(").replace("[", r"\[")):
        bind([assignment], (Example,), "example")


def test_bind_sets_values_and_keeps_defaults() -> None:
    (values,) = bind(["p=0.25", "n= 7"], (Example,), "example")
    assert values == Example(7, 0.25)
    with pytest.raises(ParamError, match="given twice"):
        bind(["n=1", "n=2"], (Example,), "example")


def test_a_default_outside_its_range_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="outside"):
        param(0, "bad", low=1)
    assert Bounds(0, None).admits(10**30) and not Bounds(0, 1, open_high=True).admits(1)


def test_no_problem_and_protocol_declare_the_same_name() -> None:
    """``bind`` routes each name to exactly one declaration of the pair."""
    for problem in PROBLEMS.values():
        for name in protocols_of(problem):
            names = [p.name for d in (problem.params, type(PROTOCOLS[name].params)) for p in declared(d)]
            assert len(names) == len(set(names)), (problem.name, name)


def test_problem_values_reach_the_decomposition() -> None:
    problem = PROBLEMS["obfuscated-primality"]
    assert problem.params is PrimalityParams
    assert PrimalityParams() == PrimalityParams(WIDTH, LEAF, DIVISION_BUDGET)
    D = problem.instance(10, False, np.random.default_rng(0), PrimalityParams(q=3, leaf=5, budget=7)).decomposition
    assert (D.width, D.leaf_size, D.budget) == (3, 5, 7)
    with pytest.raises(TypeError, match="PrimalityParams"):
        problem.instance(10, False, np.random.default_rng(0), ProverEstimatorParams())


@pytest.mark.parametrize("protocol", ["prover-estimator", "naive-recursive"])
def test_q_changes_the_debated_width(capsys: pytest.CaptureFixture[str], protocol: str) -> None:
    common = (protocol, "--problem", "obfuscated-primality", "--size", "8", "--trials", "3", "--bob", "omniscient")
    default = run_json(capsys, *common)
    three = run_json(capsys, *common, "-P", "q=3")
    assert (default["width"], three["width"]) == (4, 3)
    assert three["params"]["q"] == 3 and three["params"]["budget"] == DIVISION_BUDGET
    assert three["T"] == 3 ** three["depth"]


def test_leaf_changes_the_depth(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("naive-recursive", "--problem", "obfuscated-primality", "--size", "8", "--trials", "2")
    assert run_json(capsys, *common, "--param", "leaf=4")["depth"] == 3  # 4·4^3 >= 255 > 4·4^2
    assert run_json(capsys, *common)["depth"] == 2  # 16·4^2 >= 255 > 16·4


def test_budget_reaches_the_bounded_challenger(capsys: pytest.CaptureFixture[str]) -> None:
    """With N of 16 bits every claim is within 2^10 divisions, so the honest bounded B always
    finds the obfuscator's flaw; with no divisions it can only guess."""
    common = ("naive-recursive", "--problem", "obfuscated-primality", "--size", "8", "--truth", "no")
    common += ("--alice", "obfuscate", "--bob", "honest", "--trials", "40")
    assert run_json(capsys, *common)["honest_win_rate"] == 1.0
    blind = run_json(capsys, *common, "-P", "budget=0")
    assert blind["honest_win_rate"] < 0.5 and blind["params"]["budget"] == 0


def test_run_echoes_every_parameter_in_effect(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "prover-estimator", "--problem", "obfuscated-primality", "--size", "8", "--trials", "2")
    defaults = ProverEstimatorParams()
    assert data["params"] == {
        "q": WIDTH,
        "leaf": LEAF,
        "budget": DIVISION_BUDGET,
        "eps": defaults.eps,
        "rho": defaults.rho,
        "delta": defaults.delta,
    }
    assert data["epsilon"] == defaults.eps and data["rho"] == defaults.rho
    assert run_json(capsys, "cross-exam", "--problem", "parity", "--size", "8", "--trials", "2")["params"] == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("run", "prover-estimator", "--problem", "obfuscated-primality", "-P", "nope=1"), "unknown parameter 'nope'"),
        (("run", "prover-estimator", "--problem", "obfuscated-primality", "-P", "q=abc"), "takes int"),
        (("run", "prover-estimator", "--problem", "obfuscated-primality", "-P", "q=1"), "must be in [2, 4096]"),
        (("run", "prover-estimator", "--problem", "obfuscated-primality", "-P", "eps=0.5"), "must be in (0, 0.5)"),
        (("run", "prover-estimator", "--problem", "obfuscated-primality", "-P", "rho=x"), "takes float"),
        (("run", "naive-recursive", "--problem", "obfuscated-primality", "-P", "eps=0.2"), "unknown parameter 'eps'"),
        (("run", "cross-exam", "--problem", "parity", "-P", "q"), "NAME=VALUE"),
        (("solve", "cross-exam", "--problem", "parity", "-P", "q=3"), "its parameters: none"),
        (("demo", "-P", "nope=1"), "unknown parameter 'nope'"),
        (("demo", "-P", "budget=-1"), "must be in [0, inf)"),
    ],
)
def test_bad_parameters_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("debatekit: error: ") and message in err, err


def test_eps_rho_and_delta_reach_the_rules_and_the_estimator(capsys: pytest.CaptureFixture[str]) -> None:
    """The debate plays the ε, ρ (r = ε(1-ρ)/4) and δ given; Algorithm 1 stops once every test's
    advantage is below δ, so a loose δ leaves an achieved δ between the default and it."""
    common = ("prover-estimator", "--problem", "obfuscated-primality", "--size", "8", "--truth", "no")
    common += ("--alice", "obfuscate", "--bob", "honest", "--trials", "3")
    default = run_json(capsys, *common)
    loose = run_json(capsys, *common, "-P", "eps=0.2", "-P", "rho=0.25", "-P", "delta=0.3")
    assert (loose["epsilon"], loose["rho"], loose["delta"]) == (0.2, 0.25, 0.3)
    assert loose["reward_ratio"] == pytest.approx(0.2 * 0.75 / 4)
    assert default["estimator_delta"] < COARSE_DELTA < loose["estimator_delta"] < 0.3  # the default asks at most 1e-9
    assert loose["params"] | {"q": 0} == {
        "q": 0,
        "leaf": LEAF,
        "budget": DIVISION_BUDGET,
        "eps": 0.2,
        "rho": 0.25,
        "delta": 0.3,
    }


def test_demo_settings_apply_to_every_declaration_of_a_name() -> None:
    settings = bind_everywhere(
        ["q=3"], {p.name: p.params for p in PROBLEMS.values()}, {s.name: type(s.params) for s in PROTOCOLS.values()}
    )
    assert settings.problem(PROBLEMS["obfuscated-primality"]) == PrimalityParams(q=3)
    assert settings.problem(PROBLEMS["parity"]) == NoParams()
    assert settings.protocol(PROTOCOLS["prover-estimator"]) is PROTOCOLS["prover-estimator"]
    eps = bind_everywhere(["eps=0.2"], {}, {"prover-estimator": ProverEstimatorParams})
    assert eps.protocol(PROTOCOLS["prover-estimator"]).params == ProverEstimatorParams(eps=0.2)


def test_problems_lists_every_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "problems", "--params")
    assert code == 0
    for name in ("q", "leaf", "budget", "eps", "rho", "delta", "constants"):
        assert any(line.split()[0] == name for line in out.splitlines() if line.startswith("  ")), name
    assert "problem obfuscated-primality:" in out and "protocol prover-estimator:" in out
    assert "protocol stochastic:" in out and "planned|lean|paper" in out
    code, out, _ = cli(capsys, "problems", "--params", "--json")
    owners = {(o["kind"], o["name"]): [p["name"] for p in o["params"]] for o in json.loads(out)["params"]}
    assert owners == {
        ("problem", "obfuscated-primality"): ["q", "leaf", "budget"],
        ("protocol", "stochastic"): ["constants", "verifier_budget"],
        ("protocol", "prover-estimator"): ["eps", "rho", "delta"],
    }
    code, out, _ = cli(capsys, "run", "--help")
    assert "--param" in out and "problems --params" in " ".join(out.split())


def test_stochastic_constants_are_its_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    """One way to vary a protocol: stochastic debate's constants are its declared parameter
    (``-P constants=...``), which ``--constants`` sets too; the two must agree."""
    common = ("stochastic", "--problem", "noisy-majority", "--size", "8", "--trials", "3")
    flag, param_ = run_json(capsys, *common, "--constants", "lean"), run_json(capsys, *common, "-P", "constants=lean")
    assert flag["constants"] == param_["constants"] == "lean"
    assert flag["params"] == {"constants": "lean", "verifier_budget": 0}
    assert flag == param_
    assert run_json(capsys, *common, "--constants", "lean", "-P", "constants=lean") == flag
    code, out, err = cli(capsys, "run", *common, "--constants", "lean", "-P", "constants=paper")
    assert (code, out) == (2, "") and "disagree" in err and err.count("\n") == 1
    code, out, err = cli(capsys, "run", *common, "-P", "constants=tight")
    assert (code, out) == (2, "") and "is one of planned, lean, paper" in err and err.count("\n") == 1
    assert PROTOCOLS["stochastic"].params.constants is Constants.planned
