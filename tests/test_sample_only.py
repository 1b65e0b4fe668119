"""``--oracle sample`` on the batch protocols: the oracle's probabilities are hidden from players and
engine (a person or a model only answers), and every protocol still runs and keeps its promise.
The node protocols are covered in tests/test_engine.py."""

from __future__ import annotations

import pytest

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.oracle import SampleOnly
from debatekit.problems import PROBLEMS
from debatekit.protocols.payoffs import BoundKind
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.spec import StochasticParams


def hidden(instance) -> Oracles:
    oracle = SampleOnly(instance.oracle)
    return Oracles(oracle, oracle)


@pytest.mark.parametrize("truth", [True, False])
def test_stochastic_debate_with_a_sample_only_oracle_plays_the_same_honest_debates(truth: bool) -> None:
    """Honest parties only ever count answers, so hiding p changes none of their debates: the
    counts come one per question from the oracle instead of one vectorised binomial draw, from the
    same generators in the same order."""
    spec = PROTOCOLS["stochastic"].with_params(StochasticParams(Constants.lean))
    instance = make_instance(PROBLEMS["noisy-majority"], 10, truth, 0)
    honest = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    known = run(spec, instance, *honest, trials=60, seed=3)
    sampled = run(spec, instance, *honest, trials=60, seed=3, oracles=hidden(instance))
    assert sampled.to_json() == known.to_json()
    assert known.verifier_queries_max > 0 or known.alice_queries_mean > 0  # the oracle was asked


def test_an_adversary_that_needs_probabilities_forfeits_with_a_sample_only_oracle() -> None:
    spec = PROTOCOLS["stochastic"].with_params(StochasticParams(Constants.lean))
    instance = make_instance(PROBLEMS["noisy-majority"], 10, False, 0)
    result = run(
        spec,
        instance,
        spec.strategies[Role.ALICE]["influential"],
        spec.strategies[Role.BOB]["honest"],
        trials=10,
        seed=0,
        oracles=hidden(instance),
    )
    assert result.forfeits["alice"] == 10 and "SampleOnlyError" in result.forfeit_reasons["alice"]
    assert result.honest_win_rate == 1.0


@pytest.mark.parametrize("name", ["prover-estimator", "naive-recursive"])
@pytest.mark.parametrize("truth", [True, False])
def test_recursive_debate_asks_the_verifiers_oracle_and_runs_sample_only(name: str, truth: bool) -> None:
    """The verifier's round-0 query goes to the run's oracle, here the decomposition's judge seen
    only through samples; the honest side keeps its promise."""
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS["evidence-majority"], 1, truth, 0)
    alice = spec.strategies[Role.ALICE]["honest" if truth else "wrong-answer"]
    players = alice, spec.strategies[Role.BOB]["omniscient"]
    result = run(spec, instance, *players, trials=20, seed=0, oracles=hidden(instance))
    assert result.verifier_queries_max == (1 if truth else result.verifier_queries_max) <= 1  # a leaf is reached
    assert result.honest_win_rate == 1.0
    if result.payoffs is not None and result.payoffs.conclusions.bound.kind is BoundKind.COMPLETENESS:
        assert result.payoffs.mean >= result.payoffs.conclusions.bound.value


def test_oracle_sample_on_the_command_line_for_every_protocol(capsys) -> None:
    for name, problem, size in [
        ("stochastic", "noisy-majority", "8"),
        ("prover-estimator", "evidence-majority", "1"),
        ("naive-recursive", "evidence-majority", "1"),
        ("cross-exam", "approval-majority", "6"),
    ]:
        bob = ["--bob", "omniscient"] if name == "prover-estimator" else []
        code = main(["run", name, "--problem", problem, "--size", size, "--trials", "5", "--oracle", "sample", *bob])
        assert code == 0, (name, capsys.readouterr().err)
