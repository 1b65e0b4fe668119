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
* :func:`expected_payoff`: a payoff game's expected payoff vector to A for given strategies
  (:class:`~debatekit.engine.nodes.Payoff` ends, rewards :class:`~debatekit.engine.nodes.Paid` on
  the way), walked with an explicit stack (depth is not bounded by Python's recursion limit) and
  memoised on the keys of :class:`~debatekit.engine.nodes.Move` and
  :class:`~debatekit.engine.nodes.Chance` nodes.

Nature's draws (:class:`~debatekit.engine.nodes.Chance`) are summed over their outcomes throughout.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from debatekit.engine.nodes import Chance, End, Judge, Move, Node, Paid, Payoff, advance, drawn, judge, lost
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


NO_RANDOM: Any = NoRandom()
"""The one :class:`NoRandom` every seat of an exact analysis is given (it holds nothing)."""


class _Fork(Exception):
    def __init__(self, outcomes: list[tuple[int, Weight]]):
        self.outcomes = outcomes


class _Script:
    """The verifier's oracle access in exact mode: replays the answers fixed on earlier passes, fixes
    a certain answer at once, and forks on an uncertain one (:func:`_forked` runs each branch)."""

    def __init__(self, oracle: Oracle):
        self.oracle = oracle
        self.answers: list[int] = []
        self.position = 0

    def _p(self, query: Hashable) -> float:
        p = self.oracle.probability(query)
        if p is None:
            raise ExactError("exact analysis needs an oracle with known probabilities")
        return p

    def __call__(self, query: Hashable) -> int:
        if self.position < len(self.answers):  # an answer fixed on an earlier pass
            self.position += 1
            return self.answers[self.position - 1]
        p = self._p(query)
        if p <= 0 or p >= 1:  # a certain answer: fixed at once, as a fork with one outcome would be
            self.answers.append(int(p >= 1))
            self.position += 1
            return self.answers[-1]
        # Fraction(p) is the float's exact value, so a query keeps the result exact; built only
        # where the check forks (Dist.bernoulli's outcomes, without building a Dist).
        p = Fraction(p)
        raise _Fork([(1, p), (0, 1 - p)])


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
        if isinstance(node, Chance):
            if node.key is not None and node.key in memo:
                return memo[node.key]
            drawn_value = sum(
                (_weight(w) * self.value(drawn(node, o, self.alice_argues), memo) for o, w in _outcomes(node)),
                start=Fraction(0),
            )
            if node.key is not None:
                memo[node.key] = drawn_value
            return drawn_value
        if not isinstance(node, Move):
            raise ExactError(f"exact search reads verdicts; this debate ends in {type(node).__name__}")
        if node.role == self.adversary:
            return self.worst(node, memo)
        try:
            message = node.ask(self.players[node.role])
        except ExactError:
            raise
        except Exception as err:
            charge(node.role, err, node.role in self.trusted)  # a trusted built-in's: an internal error
            return self.value(lost(node, node.role, str(err), self.alice_argues), memo)
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
        script = self.script
        script.answers, script.position = [], 0
        try:  # the common case first: no query whose answer is uncertain, so one pass and no fork
            return self.won(judge(node, script, self.alice_argues))
        except _Fork as fork:
            ends = _forked(node, script, self.alice_argues, fork)
        return sum((weight * self.won(end) for weight, end in ends), start=0)

    def won(self, end: End | Payoff) -> int:
        """Whether the check's ``end`` is the target verdict (1 or 0)."""
        if not isinstance(end, End):
            raise ExactError(f"exact search reads verdicts; this check ends in {type(end).__name__}")
        return int(end.verdict == self.target)


def _checked(node: Judge, script: _Script, alice_argues: int) -> list[tuple[Weight, End | Payoff]]:
    """The verifier's check with every sequence of oracle answers: (probability, end) pairs."""
    script.answers, script.position = [], 0
    try:  # the common case first: no query whose answer is uncertain, so one pass and no fork
        return [(1, judge(node, script, alice_argues))]
    except _Fork as fork:
        return _forked(node, script, alice_argues, fork)


def _forked(node: Judge, script: _Script, alice_argues: int, fork: _Fork) -> list[tuple[Weight, End | Payoff]]:
    """:func:`_checked`'s pairs once its first pass met ``fork``: each pass replays the answers
    fixed so far (those certain included) and forks at the next uncertain query."""
    pending: list[tuple[list[int], Weight]] = [([*script.answers, a], w) for a, w in fork.outcomes]
    out: list[tuple[Weight, End | Payoff]] = []
    while pending:
        answers, weight = pending.pop()
        script.answers, script.position = answers, 0
        try:
            end = judge(node, script, alice_argues)
        except _Fork as fork:
            pending += [([*answers, a], weight * w) for a, w in fork.outcomes]
            continue
        out.append((weight, end))
    return out


def _outcomes(node: Chance) -> Sequence[tuple[Any, Any]]:
    if node.outcomes is None:
        raise ExactError(f"nature's draw {node.what} can only be sampled; exact analysis needs its outcomes")
    return node.outcomes()


def _weight(w: Any) -> Weight:
    """A probability kept exact: a float as its exact Fraction, so a sum of them stays exact (and a
    search's 0/1 ints, kept while every weight met is 1, as Fractions)."""
    return w if isinstance(w, Fraction) else Fraction(w)


def _setup(
    spec: ProtocolSpec, instance: Instance, strategies: dict[Role, Strategy]
) -> tuple[Node, dict[Role, Any], _Script]:
    ledger = Ledger()
    script = _Script(instance.oracle)
    copies = own_copies(instance, strategies)  # a user's seat its own copy; built-ins read the verifier's
    players = {
        role: s.factory(Seat(copies[role], role, NO_RANDOM, Asker(instance.oracle, role, ledger, NO_RANDOM)))
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


def expected_payoff(spec: ProtocolSpec, instance: Instance, alice: Strategy, bob: Strategy) -> np.ndarray:
    """A's expected payoff vector exactly, for strategies whose randomness is expressed as Dist
    moves, in a game whose debates end in :class:`~debatekit.engine.nodes.Payoff`."""
    root, players, script = _setup(spec, instance, {Role.ALICE: alice, Role.BOB: bob})
    trusted = frozenset(s.role for s in (alice, bob) if s.trusted)
    return expectation(root, players, script, trusted, spec.alice_argues)


def expectation(
    root: Node,
    players: dict[Role, Any],
    script: _Script | Oracle,
    trusted: frozenset[Role] = frozenset(),
    alice_argues: int = 1,
) -> np.ndarray:
    """The expected payoff vector from ``root``: mixed moves, nature's draws and the verifier's
    answers (``script``, or the oracle it answers from) summed over their outcomes, what is paid on
    the way added, each keyed node's value kept in a memo. Walked in post order with an explicit
    stack, so no Python recursion."""
    script = script if isinstance(script, _Script) else _Script(script)
    memo: dict[Hashable, Any] = {}
    stack: list[_Frame] = [_Frame(root)]
    while True:
        frame = stack[-1]
        if frame.branches is None:
            done = frame.open(memo, players, script, trusted, alice_argues)
            if done is None:
                continue
        elif frame.at < len(frame.branches):
            stack.append(_Frame(frame.branches[frame.at][1]))
            continue
        else:
            done = frame.total
            key = getattr(frame.node, "key", None)
            if key is not None:
                memo[key] = done
        stack.pop()
        if not stack:
            return np.asarray(done, dtype=float)
        parent = stack[-1]
        assert parent.branches is not None
        parent.total = parent.total + float(parent.branches[parent.at][0]) * np.asarray(done, dtype=float)
        parent.at += 1


@dataclass
class _Frame:
    """A node of :func:`expectation`'s walk: its weighted branches and the value summed so far."""

    node: Node
    branches: list[tuple[Weight, Node]] | None = None
    at: int = 0
    total: Any = 0.0

    def open(
        self,
        memo: dict[Hashable, Any],
        players: dict[Role, Any],
        script: _Script,
        trusted: frozenset[Role],
        alice_argues: int,
    ) -> Any:
        """The node's value when it is known at once (an end, a memo hit), else None with its
        branches set."""
        node = self.node
        key = getattr(node, "key", None)
        if key is not None and key in memo:
            return memo[key]
        if isinstance(node, Payoff):
            return np.array(node.rewards, dtype=float)
        if isinstance(node, End):
            raise ExactError(f"a payoff game ended with a verdict ({node.reason or node.verdict})")
        if isinstance(node, Paid):
            self.total, self.branches = np.array(node.rewards, dtype=float), [(1, node.then)]
        elif isinstance(node, Chance):
            self.branches = [(w, drawn(node, o, alice_argues)) for o, w in _outcomes(node)]
        elif isinstance(node, Judge):
            self.branches = list(_checked(node, script, alice_argues))
        else:
            try:
                message = node.ask(players[node.role])
            except ExactError:
                raise
            except Exception as err:
                charge(node.role, err, node.role in trusted)  # a trusted built-in's: an internal error
                self.branches = [(1, lost(node, node.role, str(err), alice_argues))]
                return None
            moves = message.items() if isinstance(message, Dist) else [(message, 1)]
            self.branches = [(w, advance(node, m, alice_argues)[1]) for m, w in moves]
        return None


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
