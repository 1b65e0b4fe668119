"""Exact analysis over the same game trees Monte Carlo plays.

* :func:`accept_probability`: P[V = 1] for given strategies, exactly: mixed moves (a player
  returning a :class:`~debatekit.prob.Dist`) are bound over their support, and the verifier's
  oracle queries are forked over their answers with the oracle's known probabilities.
* :func:`solve`: the honest side's win probability against the best adversary, by exhaustive
  search over the adversary's moves (``Move.options``), memoised on ``Move.key`` where the
  protocol declares that a subgame's value depends only on its key. A branch whose value reaches
  0 ends the search early, since the adversary can do no better.
* :func:`solve_every_input`: :func:`solve` on every x in {0,1}^n, the condition of the query
  complexity paper's Section 2 ("for every x in f^-1(1) ... and for every x in f^-1(0) ...").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from debatekit.engine.nodes import End, Judge, Move, Node, advance, forfeit, judge
from debatekit.engine.trust import charge
from debatekit.ledger import Ledger, Role
from debatekit.machine.circuit import Circuit
from debatekit.oracle import Asker, Oracle
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.prob import Dist, Weight
from debatekit.problems.registry import Instance, InstanceError, Problem
from debatekit.protocols.spec import ProtocolSpec, guarantee_for, honest_role
from debatekit.reader import Reader


class ExactError(ValueError):
    """The instance or a strategy is outside what exact analysis can enumerate."""


class NoRandom:
    """Stands in for a strategy's generator: exact analysis cannot enumerate hidden coins."""

    def __getattr__(self, name: str) -> Any:
        raise ExactError("a strategy drew from its random generator; for exact analysis, return a Dist")


class _Fork(Exception):
    def __init__(self, outcomes: list[tuple[int, Weight]]):
        self.outcomes = outcomes


class _Script:
    """The verifier's oracle access in exact mode: replays fixed answers, then forks."""

    def __init__(self, oracle: Oracle):
        self.oracle = oracle
        self.answers: list[int] = []
        self.position = 0

    def _next(self, outcomes: list[tuple[int, Weight]]) -> int:
        if self.position < len(self.answers):
            self.position += 1
            return self.answers[self.position - 1]
        raise _Fork(outcomes)

    def _p(self, query: Hashable) -> float:
        p = self.oracle.probability(query)
        if p is None:
            raise ExactError("exact analysis needs an oracle with known probabilities")
        return p

    def __call__(self, query: Hashable) -> int:
        # Fraction(p) is the float's exact value, so a query keeps the result exact (1.0 stays 1).
        return self._next(Dist.bernoulli(Fraction(self._p(query))).items())


@dataclass
class _Search:
    players: dict[Role, Any]
    adversary: Role | None
    target: int
    script: _Script
    budget: int
    tick: Callable[[int], None] | None = None
    alice_argues: int = 1
    trusted: frozenset[Role] = frozenset()
    positions: int = 0

    def value(self, node: Node, memo: dict[Hashable, Weight]) -> Weight:
        """P[the verdict equals ``target``] from ``node``, the adversary minimising it."""
        self.positions += 1
        if self.tick and self.positions % 4096 == 0:
            self.tick(self.positions)
        if self.positions > self.budget:
            raise ExactError(f"exhaustive search passed {self.budget} positions; try a smaller --size")
        if isinstance(node, End):
            return int(node.verdict == self.target)  # an int until a weight below 1 meets it: exact and cheap
        if isinstance(node, Judge):
            return self.judge(node)
        if node.role == self.adversary:
            return self.worst(node, memo)
        try:
            message = node.ask(self.players[node.role])
        except ExactError:
            raise
        except Exception as err:
            charge(node.role, err, node.role in self.trusted)  # a trusted built-in's: an internal error
            return self.value(forfeit(node.role, str(err), self.alice_argues), memo)
        if not isinstance(message, Dist):
            return self.value(advance(node, message, self.alice_argues)[1], memo)
        return sum((w * self.value(advance(node, m, self.alice_argues)[1], memo) for m, w in message.items()), start=0)

    def worst(self, node: Move, memo: dict[Hashable, Weight]) -> Weight:
        if node.key is not None and node.key in memo:
            return memo[node.key]
        if node.options is None:
            raise ExactError(f"{node.role.value}'s moves cannot be enumerated here")
        best: Weight = 1
        for message in node.options():
            best = min(best, self.value(advance(node, message, self.alice_argues)[1], memo))
            if best == 0:
                break
        if node.key is not None:
            memo[node.key] = best
        return best

    def judge(self, node: Judge) -> Weight:
        total: Weight = 0
        pending: list[tuple[list[int], Weight]] = [([], 1)]
        while pending:
            answers, weight = pending.pop()
            self.script.answers, self.script.position = answers, 0
            try:
                verdict = judge(node, self.script, self.alice_argues).verdict
            except _Fork as fork:
                pending += [([*answers, a], weight * w) for a, w in fork.outcomes]
                continue
            total += weight * int(verdict == self.target)
        return total


def _setup(
    spec: ProtocolSpec, instance: Instance, strategies: dict[Role, Strategy]
) -> tuple[Node, dict[Role, Any], _Script]:
    ledger = Ledger()
    script = _Script(instance.oracle)
    copies = own_copies(instance, strategies)  # a user's seat its own copy; built-ins read the verifier's
    players = {
        role: s.factory(Seat(copies[role], role, NoRandom(), Asker(instance.oracle, role, ledger, NoRandom())))  # type: ignore[arg-type]
        for role, s in strategies.items()
    }
    return spec.debate(instance, Reader(ledger)), players, script


def accept_probability(
    spec: ProtocolSpec, instance: Instance, alice: Strategy, bob: Strategy, budget: int = 5_000_000
) -> Weight:
    """P[V = 1] exactly, for strategies whose randomness is expressed as Dist moves."""
    root, players, script = _setup(spec, instance, {Role.ALICE: alice, Role.BOB: bob})
    trusted = frozenset(s.role for s in (alice, bob) if s.trusted)
    search = _Search(players, None, 1, script, budget, alice_argues=spec.alice_argues, trusted=trusted)
    return _weight(search.value(root, {}))


def _weight(value: int | Weight) -> Weight:
    """A search's value as a Weight: the ints it keeps while every weight met is 1 become Fractions."""
    return Fraction(value) if isinstance(value, int) else value


@dataclass(frozen=True)
class Solution:
    """The honest side's exact win probability against the best adversary."""

    protocol: str
    problem: str
    size: int
    truth: str
    honest: str
    adversary: str
    value: float
    exact: str
    positions: int
    guarantee: float


def solve(
    spec: ProtocolSpec, instance: Instance, budget: int = 5_000_000, tick: Callable[[int], None] | None = None
) -> Solution:
    """Exhaustive search over the dishonest side's moves against the honest strategy;
    ``tick(positions)`` reports progress."""
    if spec.debate is None:
        if spec.solver is None:
            raise ExactError(f"{spec.name} has no exact solver")
        return spec.solver(instance)
    honest = honest_role(spec, instance.truth)
    adversary = honest.opponent
    strategy = spec.honest(honest)
    root, players, script = _setup(spec, instance, {honest: strategy})
    trusted = frozenset({honest} if strategy.trusted else ())
    search = _Search(players, adversary, instance.answer, script, budget, tick, spec.alice_argues, trusted)
    value = _weight(search.value(root, {}))
    guarantee = guarantee_for(spec, instance, instance.oracle)
    promised = guarantee.completeness if instance.truth else 1 - guarantee.soundness
    return Solution(
        spec.name,
        instance.problem,
        instance.size,
        "yes" if instance.truth else "no",
        honest.value,
        adversary.value,
        float(value),
        str(value),
        search.positions,
        promised,
    )


def solve_every_input(
    spec: ProtocolSpec,
    problem: Problem,
    size: int,
    budget: int = 5_000_000,
    tick: Callable[[int], None] | None = None,
) -> list[tuple[str, Solution]]:
    """:func:`solve` for every input x of ``size`` bits, each against its own best adversary:
    (x as a bit string, solution) pairs. The problem's instance supplies the circuit forms; x
    and the truth f(x) are replaced, f(x) computed by the problem's fan-in-2 circuit (its
    ``machine``), independently of the form the protocol plays on. ``budget`` bounds the
    positions searched over all inputs together."""
    base = None
    for truth in (True, False):
        try:
            base = problem.instance(size, truth, np.random.default_rng(0))
            break
        except InstanceError:
            continue
    if base is None:
        raise ExactError(f"{problem.name} has no instance of size {size}")
    circuit = base.machine
    if not isinstance(circuit, Circuit) or circuit.n_witness or circuit.n_inputs != size:
        raise ExactError(f"{problem.name} has no circuit on x alone to give every input's answer")
    if 2**size > budget:
        raise ExactError(f"{2**size} inputs exceed the budget of {budget} positions; try a smaller --size")
    results, searched = [], 0
    for bits in itertools.product((0, 1), repeat=size):
        x = np.array(bits, dtype=np.uint8)
        case = replace(base, x=x, truth=bool(circuit.evaluate(x)[-1]))
        solution = solve(spec, case, budget - searched, _shifted(tick, searched))
        searched += solution.positions
        results.append(("".join(map(str, bits)), solution))
    return results


def _shifted(tick: Callable[[int], None] | None, done: int) -> Callable[[int], None] | None:
    """Progress of one search reported as a total over the searches before it."""
    return None if tick is None else (lambda k: tick(done + k))
