"""Exact analysis: acceptance probabilities derived by hand and by independent enumeration, agreement
with Monte Carlo within a derived interval, and exhaustive game values."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy.stats import binomtest

from conftest import circuit_values
from debatekit.analysis.exact import ExactError, accept_probability, solve
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.ledger import Role
from debatekit.machine.circuit import Gate
from debatekit.machine.transcript import MachineBuilder
from debatekit.oracle import FunctionOracle, SampleOracle
from debatekit.players.base import Strategy
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.registry import PROTOCOLS

CROSS = PROTOCOLS["cross-exam"]
BISECT = PROTOCOLS["bisection"]
CONFIDENCE = 0.999


def strategy(role: Role, name: str) -> Strategy:
    spec = CROSS if name.startswith("x:") else BISECT
    return spec.strategies[role][name.removeprefix("x:").removeprefix("b:")]


def monte_carlo_agrees(spec, instance, alice: Strategy, bob: Strategy, exact: Fraction, trials: int, seed: int) -> None:
    """The exact value lies in the Clopper-Pearson interval of the Monte Carlo accept count, at
    confidence 99.9% (a fixed seed makes the check deterministic)."""
    result = run(spec, instance, alice, bob, trials=trials, seed=seed)
    accepts = round(result.accept_rate * trials)
    ci = binomtest(accepts, trials).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    assert ci.low <= exact <= ci.high, (accepts, trials, float(exact), ci)


# -- cross-examination: lie about the output against a uniformly random challenge -----------------


def enumerate_cross_exam(instance: Instance, message: list[int]) -> Fraction:
    """P[V = 1] against a uniform challenge, by the test's own reading of Figure 1 on a circuit."""
    circuit = instance.machine
    values = [*instance.x.tolist(), *message]
    ops = {Gate.AND: lambda a, b: a & b, Gate.OR: lambda a, b: a | b, Gate.XOR: lambda a, b: a ^ b}
    steps, total = circuit.length, Fraction(0)
    for t in range(steps):
        op, a, b = Gate(int(circuit.ops[t])), int(circuit.in0[t]), int(circuit.in1[t])
        expected = 1 - values[a] if op is Gate.NOT else ops[op](values[a], values[b])
        accepted = message[t] == expected and message[-1] == 1
        total += Fraction(int(accepted), steps)
    return total


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_lie_output_against_point_random_is_caught_only_at_the_output(n):
    """On a no-instance lie-output sends the true transcript with a_T flipped to 1. A challenge at
    t < T finds a true step and V outputs a_T = 1; only t = T catches the lie: P[V=1] = (T-1)/T."""
    instance = make_instance(PROBLEMS["parity"], n, False, 0)
    steps = instance.machine.length
    assert steps == n - 1
    alice, bob = strategy(Role.ALICE, "x:lie-output"), strategy(Role.BOB, "x:point-random")
    exact = accept_probability(CROSS, instance, alice, bob)
    assert isinstance(exact, Fraction)
    assert exact == Fraction(steps - 1, steps)
    lie = circuit_values(instance.machine, instance.x)
    lie[-1] ^= 1
    assert enumerate_cross_exam(instance, lie) == exact
    # on a yes-instance the same lie says 0, and no challenge makes V say 1
    yes = make_instance(PROBLEMS["parity"], n, True, 0)
    assert accept_probability(CROSS, yes, alice, bob) == 0


@pytest.mark.parametrize(("n", "seed"), [(3, 1), (4, 2), (9, 3)])
def test_monte_carlo_agrees_with_exact_cross_exam(n, seed):
    instance = make_instance(PROBLEMS["parity"], n, False, seed)
    alice, bob = strategy(Role.ALICE, "x:lie-output"), strategy(Role.BOB, "x:point-random")
    exact = accept_probability(CROSS, instance, alice, bob)
    monte_carlo_agrees(CROSS, instance, alice, bob, exact, trials=1500, seed=seed)


# -- bisection: lie about the final state against a uniformly random half --------------------------


def enumerate_bisection_walks(steps: int) -> Fraction:
    """P[the dispute ends on the last step T-1 -> T] when Bob picks each half with probability 1/2,
    by walking every sequence of Bob's bits."""
    rounds = math.ceil(math.log2(steps)) if steps > 1 else 0
    total = Fraction(0)
    for bits in itertools.product((0, 1), repeat=rounds):
        begin, length = 0, steps
        for b in bits:
            if length == 1:  # a shorter walk ignores the rest of the bits (each tail counted once)
                break
            first = length // 2
            begin, length = (begin, first) if b == 0 else (begin + first, length - first)
        assert length == 1  # ceil(log2 T) rounds always suffice
        total += Fraction(int(begin == steps - 1), 2**rounds)
    return total


@pytest.mark.parametrize(("problem", "n"), [("parity", 1), ("parity", 4), ("parity", 6), ("palindrome", 3)])
def test_lie_final_against_random_half(problem, n):
    """lie-final sends true middles and the true final configuration relabelled as accepting, so
    only the last step T-1 -> T is false. A random Bob reaches it only by picking the second half
    every round, ceil(log2 T) rounds: P[V=1] = 1 - 2^-ceil(log2 T)."""
    instance = make_instance(PROBLEMS[problem], n, False, 0)
    steps = instance.turing.time
    alice, bob = strategy(Role.ALICE, "b:lie-final"), strategy(Role.BOB, "b:random")
    exact = accept_probability(BISECT, instance, alice, bob)
    assert exact == 1 - Fraction(1, 2 ** math.ceil(math.log2(steps)))
    assert exact == 1 - enumerate_bisection_walks(steps)
    monte_carlo_agrees(BISECT, instance, alice, bob, exact, trials=800, seed=n)


# -- the verifier's oracle query is a chance node --------------------------------------------------


class _Sends:
    def __init__(self, message: Any):
        self.message = message

    def transcript(self) -> Any:
        return self.message

    def challenge(self, message: Any) -> Any:
        return self.message


def sends(role: Role, message: Any) -> Strategy:
    return Strategy("fixed", role, "a fixed move", lambda seat: _Sends(message))


def judged_copy_instance(p: float) -> Instance:
    """x = (1); y_0 = O(("judge", x_0)) with P[O = 1] = p; y_1 = y_0 (the output)."""
    b = MachineBuilder(inputs=1)
    judged = b.ask(lambda a: ("judge", a), 0)
    b.compute(lambda y: y, judged)
    return Instance("judged", 1, True, np.array([1], dtype=np.uint8), FunctionOracle(lambda q: p), machine=b.build())


def test_verifier_oracle_query_forks_exactly():
    instance = judged_copy_instance(0.3)
    p = Fraction(0.3)  # the float's exact value: the oracle's probability as stated
    point_random = strategy(Role.BOB, "x:point-random")

    def accept(alice_message: Any, bob: Strategy) -> Fraction:
        return accept_probability(CROSS, instance, sends(Role.ALICE, alice_message), bob)

    # a = (1, 1), challenge 0: V re-asks O and accepts iff it says 1 again, then outputs a_T = 1
    assert accept((1, 1), sends(Role.BOB, 0)) == p
    # challenge 1 is a compute step (copy y_0): it holds, and t = T so V outputs a_1 = 1; no query
    assert accept((1, 1), sends(Role.BOB, 1)) == 1
    assert accept((1, 1), point_random) == (p + 1) / 2
    # a = (0, 1): step 0 holds iff O says 0, and then V outputs a_T = 1; step 1 (copy) fails
    assert accept((0, 1), point_random) == (1 - p) / 2
    assert accept((0, 1), sends(Role.BOB, None)) == 1  # accepting reads a_T only
    assert accept((0, 0), point_random) == 0
    # a mixed Alice is bound over her support
    mixed = Dist([((1, 1), Fraction(1, 3)), ((0, 1), Fraction(2, 3))])
    expected = Fraction(1, 3) * (p + 1) / 2 + Fraction(2, 3) * (1 - p) / 2
    assert accept(mixed, point_random) == expected
    # and Monte Carlo, where V really samples O, agrees
    monte_carlo_agrees(CROSS, instance, sends(Role.ALICE, (1, 1)), point_random, (p + 1) / 2, trials=2000, seed=5)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_a_deterministic_query_keeps_the_result_exact(p):
    instance = judged_copy_instance(p)
    value = accept_probability(CROSS, instance, sends(Role.ALICE, (1, 1)), strategy(Role.BOB, "x:point-random"))
    assert isinstance(value, Fraction)
    assert value == (Fraction(int(p)) + 1) / 2


# -- exhaustive game values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "problem", "size", "truth"),
    [("cross-exam", p, n, t) for p in ("parity", "majority") for n in (2, 3, 4) for t in (True, False)]
    + [("bisection", "parity", 1, True), ("bisection", "parity", 1, False), ("bisection", "palindrome", 2, True)],
)
def test_solve_honest_side_wins_against_the_best_adversary(protocol, problem, size, truth):
    spec = PROTOCOLS[protocol]
    solution = solve(spec, make_instance(PROBLEMS[problem], size, truth, 0))
    assert (solution.value, solution.exact, solution.guarantee) == (1.0, "1", 1.0)
    assert (solution.honest, solution.adversary) == (("alice", "bob") if truth else ("bob", "alice"))
    assert solution.positions > 1


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("seed", range(4))
def test_solve_finds_the_best_lie_against_a_random_challenger(n, seed):
    """With a uniformly random Bob standing in for the honest one, Alice's best transcript on a
    no-instance has exactly one inconsistent step (one must be: the output is false), so she
    is caught with probability 1/T. The search must find that lie among all 2^T transcripts."""
    stand_in = replace(strategy(Role.BOB, "x:point-random"), honest=True)  # declared the honest Bob
    weak = replace(CROSS, strategies={**CROSS.strategies, Role.BOB: {"honest": stand_in}})
    instance = make_instance(PROBLEMS["parity"], n, False, seed)
    solution = solve(weak, instance)
    assert solution.exact == str(Fraction(1, instance.machine.length))
    blind_bob = replace(strategy(Role.BOB, "x:accept"), honest=True)
    blind = replace(CROSS, strategies={**CROSS.strategies, Role.BOB: {"honest": blind_bob}})
    assert solve(blind, instance).value == 0.0


def test_solve_raises_when_the_budget_is_too_small():
    instance = make_instance(PROBLEMS["majority"], 4, False, 0)
    with pytest.raises(ExactError):
        solve(CROSS, instance, budget=10)
    with pytest.raises(ExactError):
        solve(BISECT, make_instance(PROBLEMS["parity"], 1, False, 0), budget=10)


@pytest.mark.parametrize(
    ("spec", "alice", "bob"),
    [
        (CROSS, "x:random", "x:honest"),  # draws its transcript when it sits down
        (CROSS, "x:lie-step", "x:honest"),
        (CROSS, "x:honest", "x:malformed"),  # draws when asked for a challenge
        (BISECT, "b:random", "b:honest"),  # draws its final configuration when asked
        (BISECT, "b:honest", "b:malformed"),
    ],
)
def test_accept_probability_refuses_hidden_randomness(spec, alice, bob):
    instance = make_instance(PROBLEMS["parity"], 3, True, 0)
    with pytest.raises(ExactError):
        accept_probability(spec, instance, strategy(Role.ALICE, alice), strategy(Role.BOB, bob))


def test_exact_analysis_needs_known_oracle_probabilities():
    instance = replace(judged_copy_instance(0.5), oracle=SampleOracle(lambda q, rng: 1))
    with pytest.raises(ExactError):
        accept_probability(CROSS, instance, sends(Role.ALICE, (1, 1)), sends(Role.BOB, 0))


def test_a_check_mixing_certain_and_uncertain_answers_is_summed_exactly():
    """The exact solver answers a certain query at once and forks on an uncertain one; a later
    pass replays each answer in its own place: the check below asks q0 (certain no), q1 (p = 1/2),
    q2 (certain yes), q3 (p = 1/4) and accepts iff the answers spell 0, 1, 1, 0, so P = 1/2 * 3/4,
    exactly, through the search's own judge as through ``_checked``."""
    from debatekit.analysis.exact import _checked, _Script, _Search
    from debatekit.engine.nodes import End, Judge, Query

    oracle = FunctionOracle({"q0": 0.0, "q1": 0.5, "q2": 1.0, "q3": 0.25}.__getitem__)
    seen: set[tuple[int, ...]] = set()

    def check() -> Any:
        answers = (yield Query("q0")), (yield Query("q1")), (yield Query("q2")), (yield Query("q3"))
        seen.add(answers)
        return int(answers == (0, 1, 1, 0))

    ends = _checked(Judge(check), _Script(oracle), 1)
    assert seen == {(0, a, 1, b) for a in (0, 1) for b in (0, 1)}
    assert sum(w for w, end in ends if isinstance(end, End) and end.verdict == 1) == Fraction(3, 8)
    assert sum(w for w, _ in ends) == 1
    search = _Search({}, None, 1, _Script(oracle), 100)
    assert search.value(Judge(check), {}) == Fraction(3, 8)
    assert search.value(Judge(lambda: (yield Query("q2")) - (yield Query("q0"))), {}) == 1  # no fork at all
