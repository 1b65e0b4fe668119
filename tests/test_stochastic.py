"""Stochastic-oracle debate (Theorem 6.2, Lean Debate/*): guarantees, costs, exactness, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from debatekit.analysis.exact import ExactError
from debatekit.analysis.lipschitz import enumerate_bounds
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.ledger import Role
from debatekit.machine.transcript import MachineBuilder, StepKind
from debatekit.oracle import TableOracle
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic import exact as stochastic_exact
from debatekit.protocols.stochastic import rules as stochastic
from debatekit.protocols.stochastic.exact import Play
from debatekit.protocols.stochastic.params import Constants, Params, ParamsError, samples
from debatekit.protocols.stochastic.spec import StochasticParams

CONSTANTS = (Constants.lean, Constants.paper, Constants.planned)
TRIALS = 500


def spec(constants: Constants):
    return PROTOCOLS["stochastic"].with_params(StochasticParams(constants))


def ci(successes: int, trials: int, level: float) -> tuple[float, float]:
    interval = binomtest(successes, trials).proportion_ci(confidence_level=level, method="wilson")
    return interval.low, interval.high


def strategy(role: Role, cls: type) -> Strategy:
    return Strategy(cls.__name__, role, cls.__doc__ or "", cls)


@pytest.mark.parametrize("constants", CONSTANTS)
@pytest.mark.parametrize("truth", [True, False])
def test_guarantee_against_every_builtin_adversary(constants: Constants, truth: bool) -> None:
    """Accept rate >= 3/5 on yes-instances, <= 2/5 on no-instances (noisy-majority, T = 50),
    demonstrated by the 99% Wilson interval, for every adversary of the dishonest side."""
    s = spec(constants)
    instance = make_instance(PROBLEMS["noisy-majority"], 50, truth, seed=3)
    honest = Role.ALICE if truth else Role.BOB
    for adversary in s.strategies[honest.opponent].values():
        players = {honest: s.strategies[honest]["honest"], honest.opponent: adversary}
        result = run(s, instance, players[Role.ALICE], players[Role.BOB], TRIALS, seed=11)
        low, high = ci(round(result.accept_rate * TRIALS), TRIALS, 0.99)
        if truth:
            assert low >= 3 / 5, (adversary.name, result.accept_rate)
        else:
            assert high <= 2 / 5, (adversary.name, result.accept_rate)
        assert result.verifier_queries_max <= result.guarantee.verifier_queries


class AbortAtFirstJudgement(stochastic.HonestBob):
    """Abort at the first oracle step, so the verifier samples the oracle."""

    def aborts(self, view, claims, bits):
        return np.full(len(view.rows), view.kind is StepKind.ORACLE)


@pytest.mark.parametrize("constants", [Constants.lean, Constants.paper])
def test_verifier_queries_do_not_grow_with_T(constants: Constants) -> None:
    """Theorem 6.2: O(K^2) verifier queries, independent of T (10 against 10^4 steps)."""
    bob = strategy(Role.BOB, AbortAtFirstJudgement)
    counts = []
    for size in (10, 10_000):
        instance = make_instance(PROBLEMS["noisy-majority"], size, True, seed=0)
        result = run(spec(constants), instance, spec(constants).strategies[Role.ALICE]["honest"], bob, 4, seed=0)
        assert result.verifier_queries_max == result.verifier_queries_mean == result.guarantee.verifier_queries
        counts.append(result.verifier_queries_max)
    assert counts[0] == counts[1]


def all_oracle_instance(steps: int, p: float) -> Instance:
    """A machine whose every step is a human judgement (Lean's model, where every step is an
    oracle call), outputting the last judgement."""
    b = MachineBuilder(inputs=0)
    for i in range(steps):
        b.ask(lambda i=i: ("judge", i))
    oracle = TableOracle({("judge", i): p for i in range(steps)})
    return Instance(
        "all-oracle", steps, p > 0.5, np.zeros(0, dtype=np.uint8), oracle=oracle, machine=b.build(), lipschitz=1.0
    )


def test_costs_match_lean_cost_formulas_exactly() -> None:
    """Cost.lean: Alice (t+1)·samples(c, q), Bob (t+1)·samples((b-s)/2, q) without an abort; Vera
    samples((s-c)/2, v) when called."""
    instance = all_oracle_instance(4, 0.9)
    s = spec(Constants.lean)
    params = Params.defaults(1.0, 4)
    never = s.strategies[Role.BOB]["never-abort"]
    honest_alice, honest_bob = s.strategies[Role.ALICE]["honest"], s.strategies[Role.BOB]["honest"]
    quiet = run(s, instance, honest_alice, never, 3, seed=0)
    assert quiet.alice_queries_mean == 4 * samples(params.c, params.q)
    both = run(s, instance, honest_alice, honest_bob, 50, seed=0)
    assert both.verifier_queries_max == 0  # honest Bob never aborts honest Alice here
    assert both.bob_queries_mean == 4 * samples((params.b - params.s) / 2, params.q)
    called = run(s, instance, honest_alice, s.strategies[Role.BOB]["always-abort"], 3, seed=0)
    assert called.verifier_queries_max == samples((params.s - params.c) / 2, params.v) == 105967


@pytest.mark.parametrize("constants", CONSTANTS)
def test_exact_and_monte_carlo_agree(constants: Constants) -> None:
    """Honest against honest: the exact P[V = 1] lies in the 99.9% interval of 4000 debates."""
    instance = make_instance(PROBLEMS["noisy-majority"], 6, True, seed=0)
    rules = stochastic.rules_for(constants, instance.lipschitz, 6)
    exact = stochastic_exact.accept_probability(instance, rules, Play.HONEST, Play.HONEST)
    s = spec(constants)
    result = run(s, instance, s.strategies[Role.ALICE]["honest"], s.strategies[Role.BOB]["honest"], 4000, seed=5)
    low, high = ci(round(result.accept_rate * 4000), 4000, 0.999)
    assert low <= exact <= high


@pytest.mark.parametrize("truth", [True, False])
def test_no_builtin_adversary_beats_the_exact_best_one(truth: bool) -> None:
    """The exact solver's best adversary is at least as strong as each built-in one: every
    built-in adversary's measured honest win rate is, within its 99.9% interval, no lower."""
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, truth, seed=0)
    value = s.solver(instance).value
    assert value >= (s.guarantee(instance).completeness if truth else 1 - s.guarantee(instance).soundness)
    honest = Role.ALICE if truth else Role.BOB
    for adversary in s.strategies[honest.opponent].values():
        players = {honest: s.strategies[honest]["honest"], honest.opponent: adversary}
        result = run(s, instance, players[Role.ALICE], players[Role.BOB], 2000, seed=9)
        wins = round(result.honest_win_rate * 2000)
        assert ci(wins, 2000, 0.999)[1] >= value, adversary.name


def test_xor_of_judgements_shows_what_goes_wrong() -> None:
    """K grows with n, and with it every budget; past n = 26 the 2/3 promise itself fails."""
    ks = [make_instance(PROBLEMS["xor-of-judgements"], n, True, 0).lipschitz for n in (3, 9, 21)]
    assert ks[0] < ks[1] < ks[2]
    vera = [stochastic.rules_for(Constants.lean, k, 10).vera_samples for k in ks]
    assert vera[2] > 25 * vera[0]  # K² growth
    with pytest.raises(ValueError, match="too close to 1/2"):
        PROBLEMS["xor-of-judgements"].make(27, True, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("name", "size"), [("noisy-majority", 9), ("xor-of-judgements", 5), ("meta-analysis", 5), ("ma-witness", 4)]
)
@pytest.mark.parametrize("truth", [True, False])
def test_declared_k_is_an_upper_bound(name: str, size: int, truth: bool) -> None:
    """The closed-form K of each problem is at least the exact hybrid bound, which is at least the
    exact effect of a concrete perturbation."""
    bounds = enumerate_bounds(make_instance(PROBLEMS[name], size, truth, seed=2))
    assert bounds.lower <= bounds.upper + 1e-12 <= bounds.claimed + 2e-12


class NaNAlice(stochastic.HonestAlice):
    """Claims NaN at every step."""

    def claims(self, view):
        return np.full(len(view.rows), np.nan)


class BadShareBob(stochastic.HonestBob):
    """Sends the coin share 1.5."""

    def shares(self, view):
        return np.full(len(view.rows), 1.5)


class CrashingBob(stochastic.HonestBob):
    """Raises instead of deciding."""

    def aborts(self, view, claims, bits):
        raise RuntimeError("no opinion")


class GarbageAlice(stochastic.HonestAlice):
    """Sends a string instead of claims."""

    def claims(self, view):
        return "probably"


@pytest.mark.parametrize(
    ("constants", "truth", "alice", "bob", "loser"),
    [
        (Constants.lean, False, NaNAlice, None, Role.ALICE),
        (Constants.lean, False, GarbageAlice, None, Role.ALICE),
        (Constants.paper, True, None, BadShareBob, Role.BOB),
        (Constants.lean, True, None, CrashingBob, Role.BOB),
    ],
)
def test_malformed_messages_lose_cleanly(constants: Constants, truth: bool, alice, bob, loser: Role) -> None:
    s = spec(constants)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, truth, seed=0)
    a = strategy(Role.ALICE, alice) if alice else s.strategies[Role.ALICE]["honest"]
    b = strategy(Role.BOB, bob) if bob else s.strategies[Role.BOB]["honest"]
    result = run(s, instance, a, b, 20, seed=0)
    assert result.forfeits[loser.value] == 20
    assert result.honest_win_rate == 1.0
    assert loser.value in result.forfeit_reasons


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"k": 0}, "k0"),
        ({"c": 0}, "c0"),
        ({"c": 0.03}, "cs"),
        ({"b": 0.015}, "sb"),
        ({"q": 0}, "q0"),
        ({"v": 0}, "v0"),
        ({"v": 2.0}, "v1"),
        ({"q": 0.02, "v": 0.01}, "qv"),
        ({"b": 0.7}, "bw"),
        ({"q": 0.009}, "complete"),
        ({"b": 0.07}, "sound"),
    ],
)
def test_params_rejects_each_broken_inequality_by_name(change: dict, name: str) -> None:
    base = {"k": 1.0, "T": 10, "v": 0.01, "c": 0.01, "s": 0.02, "b": 0.05, "q": 0.001}
    Params(**base)  # valid
    with pytest.raises(ParamsError, match=f"{name}:"):
        Params(**(base | change))


def test_lean_defaults_and_paper_budgets() -> None:
    """The two constant choices' verifier budgets at K = 1: about 1.06e5 (Lean) and 1.99e7 (paper)."""
    assert 1.05e5 < stochastic.rules_for(Constants.lean, 1.0, 1000).vera_samples < 1.07e5
    assert 1.98e7 < stochastic.rules_for(Constants.paper, 1.0, 1000).vera_samples < 2.0e7


@pytest.mark.parametrize("constants", [Constants.lean, Constants.paper])
@pytest.mark.parametrize(
    ("truth", "alice", "bob"),
    [
        (False, "bias", "never-abort"),
        (True, "under-threshold", "always-abort"),
        (False, "under-threshold", "bit-abort"),
        (True, "honest", "bit-abort"),
        (False, "lie-output", "honest"),
    ],
)
def test_exact_acceptance_of_given_strategies(constants: Constants, truth: bool, alice: str, bob: str) -> None:
    """Given (deterministic) strategies: the exact P[V = 1] lies in the 99.9% interval of 4000
    Monte Carlo debates (a tolerance of 1e-12 absorbs floating point at the ends of [0, 1])."""
    s = spec(constants)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, truth, seed=0)
    rules = stochastic.rules_for(constants, instance.lipschitz, 6)
    a, b = s.strategies[Role.ALICE][alice], s.strategies[Role.BOB][bob]
    exact = stochastic_exact.accept_probability(instance, rules, a, Play.HONEST if bob == "honest" else b)
    result = run(s, instance, a, b, 4000, seed=1)
    low, high = ci(round(result.accept_rate * 4000), 4000, 0.999)
    assert low - 1e-12 <= exact <= high + 1e-12


class MalformedOnOne(stochastic.HonestBob):
    """Never aborts, except that he answers 2 (not a bit) when the drawn bit is 1 (paper form: he sees it)."""

    def aborts(self, view, claims, bits):
        return np.where(bits == 1, 2, 0)


def test_exact_follows_the_bit_bob_saw_when_he_forfeits_on_one_value_only() -> None:
    """The exact interpreter runs the step once per value of the bit Bob sees: a decision malformed
    for one value only forfeits in that branch alone (Bob loses with probability P[a_1 = 1]), as the
    Monte Carlo debates do; the exact P[V = 1] lies in their 99.9% interval."""
    s = spec(Constants.paper)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, False, seed=0)
    rules = stochastic.rules_for(Constants.paper, instance.lipschitz, 6)
    alice, bob = s.strategies[Role.ALICE]["honest"], strategy(Role.BOB, MalformedOnOne)
    exact = stochastic_exact.accept_probability(instance, rules, alice, bob)
    assert 0 < exact < 1
    result = run(s, instance, alice, bob, 4000, seed=1)
    low, high = ci(round(result.accept_rate * 4000), 4000, 0.999)
    assert low - 1e-12 <= exact <= high + 1e-12


def test_exact_refuses_strategies_with_hidden_coins() -> None:
    s = spec(Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 6, True, seed=0)
    rules = stochastic.rules_for(Constants.lean, instance.lipschitz, 6)
    with pytest.raises(ExactError, match="random generator"):
        stochastic_exact.accept_probability(instance, rules, s.strategies[Role.ALICE]["malformed"], Play.HONEST)


ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.one_of(st.floats(allow_nan=True), st.integers(-2, 3), st.none(), st.text(max_size=2)), max_size=12),
    st.just(itertools.count()),
    st.just(object()),
)


@settings(max_examples=60, deadline=None)
@given(claim=ANYTHING, abort=ANYTHING, share=ANYTHING, paper=st.booleans())
def test_arbitrary_messages_never_crash_the_verifier(claim, abort, share, paper: bool) -> None:
    """Whatever the provers send (endless iterators included), every debate ends with a verdict."""

    class AnyAlice(stochastic.HonestAlice):
        def claims(self, view):
            return claim

        def shares(self, view):
            return share

    class AnyBob(stochastic.HonestBob):
        def aborts(self, view, claims, bits):
            return abort

        def shares(self, view):
            return share

    s = spec(Constants.paper if paper else Constants.lean)
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, seed=0)
    for a, b in (
        (strategy(Role.ALICE, AnyAlice), s.strategies[Role.BOB]["honest"]),
        (s.strategies[Role.ALICE]["honest"], strategy(Role.BOB, AnyBob)),
    ):
        result = run(s, instance, a, b, 6, seed=0)
        assert 0 <= result.accept_rate <= 1
        assert result.forfeits["alice"] + result.forfeits["bob"] <= 6
