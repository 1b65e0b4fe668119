"""Strategies for naive recursive debate, the baseline of Section 7.

Alice: ``honest``; ``obfuscate`` (the wrong claim, every subclaim answered with it when M_D
allows, so she carries no knowledge of where the flaw is); ``wrong-answer`` (the wrong claim,
with answers as close to the truth as consistency allows: a liar who knows the flaw and hides it
in one subclaim); ``random-claim`` (a coin decides her claim, then as ``wrong-answer``);
``malformed``.

Bob: ``honest`` (bounded like the provers: challenges a subclaim it can show wrong, else a random
one it cannot decide), ``omniscient`` (unbounded: knows which subclaim is wrong of A's committed
proof), ``random``
(uniform), ``spot-check``
(bounded: descends to SPOT random leaves under each subclaim claimed true and asks the oracle
about them, counted as his queries; challenges one that failed, else picks at random; made for
AND-type decompositions, where a false subclaim claimed true has a failing leaf), ``pollard-rho``
(bounded like ``honest``, but spends the budget factoring N with Pollard's rho instead of trial
division; obfuscated-primality only), ``first`` and ``malformed``.

Declared metadata (:class:`~debatekit.players.base.Strategy`): A's ``honest`` is ``honest`` (she
wins every debate); B's ``omniscient`` is ``honest`` and ``truthful`` (the unbounded challenger,
the only one the soundness promise covers). B's ``honest`` is bounded and no promise covers it
(the point of Section 7), so it declares neither.
"""

from __future__ import annotations

import itertools
from typing import Any

from debatekit.ledger import Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.players.estimator import proof_truth
from debatekit.prob import Dist
from debatekit.problems.obfuscated_primality import FactorIntervals, pollard_rho
from debatekit.problems.registry import Instance
from debatekit.protocols.naive_recursive import HonestAlice, HonestBob, Omniscient
from debatekit.protocols.prover_estimator import decomposition_of

SPOT = 2
"""Leaves the spot-checking Bob examines under each subclaim claimed true, per round."""

MAX_ENUMERATED = 12
"""Widths up to which a liar searches every answer vector for a consistent one."""


def nearest_consistent(
    D: Decomposition, level: int, query: Query, claimed: int, target: tuple[int, ...]
) -> tuple[int, ...]:
    """The answer vector closest to ``target`` (Hamming; ties lexicographic) with M_D = ``claimed``.
    Past :data:`MAX_ENUMERATED` answers, when no vector within two flips is consistent, the first
    one found by setting answers to ``claimed`` one by one from the left (consistent for monotone
    M_D: AND, OR, majority), not necessarily the closest; with none, the liar concedes."""
    if D.combine(query, level, target) == claimed:
        return target
    q = len(target)
    for flips in range(1, q + 1 if q <= MAX_ENUMERATED else 3):
        for where in itertools.combinations(range(q), flips):
            z = tuple(b ^ (i in where) for i, b in enumerate(target))
            if D.combine(query, level, z) == claimed:
                return z
    moved = list(target)
    for i in range(q):
        moved[i] = claimed
        if D.combine(query, level, tuple(moved)) == claimed:
            return tuple(moved)
    raise Malformed(Role.ALICE, f"no answers consistent with {claimed} found near {target}")


class Obfuscator(HonestAlice):
    """Section 7: the wrong claim, every subclaim answered alike (when M_D allows)."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance))
        self.lie = 1 - super().claim()

    def claim(self) -> int:
        return self.lie

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        ys = self.D.split(query, level)
        return ys, nearest_consistent(self.D, level, query, claimed, (claimed,) * len(ys))


class WrongAnswer(HonestAlice):
    """The wrong claim, hidden in as few false subclaims as consistency allows."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance))

    def claim(self) -> int:
        return 1 - super().claim()

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        ys, truth = super().decompose(level, query, claimed)
        return ys, nearest_consistent(self.D, level, query, claimed, truth)


class RandomClaim(WrongAnswer):
    """A uniformly random claim (a mixed move), defended with answers as close to the truth as
    consistency allows: honest half the time, a hidden liar otherwise."""

    def claim(self) -> Dist:
        return Dist.uniform([0, 1])


class MalformedAlice:
    """Garbage: a claim of 1, then splits and proof bits that do not parse."""

    JUNK: tuple[Any, ...] = (None, ((), ()), (("x",), (2,)), float("nan"), "split")

    def __init__(self, seat: Seat):
        self.calls = 0

    def claim(self) -> int:
        return 1

    def decompose(self, level: int, query: Query, claimed: int) -> Any:
        self.calls += 1
        return self.JUNK[self.calls % len(self.JUNK)]

    def proof(self, leaves: tuple[int, ...]) -> Any:
        return 7


class RandomBob:
    """A uniformly random subclaim (a mixed move)."""

    def __init__(self, seat: Seat):
        pass

    def challenge(self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: Any) -> Dist:
        return Dist.uniform(list(range(len(subqueries))))


class SpotCheck:
    """Bounded: asks the oracle about SPOT random leaves under each subclaim claimed true."""

    def __init__(self, seat: Seat):
        self.D, self.rng, self.ask = decomposition_of(seat.instance), seat.rng, seat.ask

    def _leaf(self, query: Query, level: int) -> Query:
        while level > 0:
            query = self.D.split(query, level)[int(self.rng.integers(self.D.width))]
            level -= 1
        return query

    def challenge(self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: Any) -> int:
        for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)):
            if a != 1 or self.ask is None:
                continue
            for _ in range(SPOT):
                leaf = self._leaf(y, level - 1)
                bits = tuple(self.D.proof(k) for k in self.D.leaf(leaf))
                if self.ask((leaf, bits)) == 0:
                    return j
        return int(self.rng.integers(len(subqueries)))


class PollardRho:
    """The ``honest`` challenger's knowledge with the budget spent on Pollard's rho instead of
    trial division: at its first challenge it runs :func:`~debatekit.problems.obfuscated_primality.pollard_rho`
    on N with the decomposition's budget (the same operations ``honest`` spends on divisions). A
    factor g found gives the one divisor min(g, N/g) of N = p·p' below √N, which settles every claim
    "no factor in [a, c)". It challenges the first subclaim it knows is wrong (claims about no
    candidate, and every claim once Miller-Rabin says N is prime, are true), else a uniformly random
    one it cannot decide."""

    def __init__(self, seat: Seat):
        self.D, self.rng = decomposition_of(seat.instance), seat.rng
        self.divisor: int | None = None
        self.factored = False

    def _known(self, D: FactorIntervals, query: Query) -> float | None:
        candidates = D.candidates(query)
        if D.miller_rabin or not candidates:
            return 1.0
        return None if self.divisor is None else float(self.divisor not in candidates)

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: Any
    ) -> int | Dist:
        D = self.D
        if not isinstance(D, FactorIntervals):
            raise ValueError(_no_integer(D))
        if not self.factored and not D.miller_rabin:
            found = pollard_rho(D.n, self.rng, D.budget).factor
            self.divisor = None if found is None else min(found, D.n // found)
        self.factored = True
        unknown = []
        for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)):
            known = self._known(D, y)
            if known is None:
                unknown.append(j)
            elif int(known) != a:
                return j
        return Dist.uniform(unknown) if unknown else 0


def _no_integer(decomposition: Decomposition) -> str:
    return f"pollard-rho factors obfuscated-primality's N; a {type(decomposition).__name__} has no integer to factor"


def _refuses_without_integer(instance: Instance) -> str | None:
    D = decomposition_of(instance)
    return None if isinstance(D, FactorIntervals) else _no_integer(D)


class First:
    """Always the first subclaim."""

    def __init__(self, seat: Seat):
        pass

    def challenge(self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: Any) -> int:
        return 0


class MalformedBob:
    """Indices out of range, negative, NaN, None, strings."""

    JUNK: tuple[Any, ...] = (10**9, -1, float("nan"), None, "0")

    def __init__(self, seat: Seat):
        self.calls = 0

    def challenge(self, level: int, query: Query, claimed: int, subqueries: Any, answers: Any) -> Any:
        self.calls += 1
        return self.JUNK[self.calls % len(self.JUNK)]


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy(
            "honest",
            Role.ALICE,
            "claim L(x), answer every subclaim correctly",
            lambda seat: HonestAlice(decomposition_of(seat.instance)),
            honest=True,
        ),
        Strategy("obfuscate", Role.ALICE, "Section 7: the wrong claim, every subclaim answered alike", Obfuscator),
        Strategy("wrong-answer", Role.ALICE, "the wrong claim hidden in one subclaim per round", WrongAnswer),
        Strategy(
            "random-claim",
            Role.ALICE,
            "a uniformly random claim, defended as closely to the truth as it can be",
            RandomClaim,
        ),
        Strategy("malformed", Role.ALICE, "splits and proof bits that do not parse", MalformedAlice),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest",
            Role.BOB,
            "challenge a subclaim shown wrong within budget, else a random undecided one",
            lambda seat: HonestBob(decomposition_of(seat.instance)),
        ),
        Strategy(
            "omniscient",
            Role.BOB,
            "challenge a subclaim wrong of her committed proof (unbounded)",
            lambda seat: Omniscient(proof_truth(seat)),
            honest=True,
            truthful=True,
        ),
        Strategy("random", Role.BOB, "a uniformly random subclaim", RandomBob),
        Strategy("spot-check", Role.BOB, f"ask the oracle about {SPOT} random leaves per subclaim", SpotCheck),
        Strategy(
            "pollard-rho",
            Role.BOB,
            "spend the budget on Pollard's rho for N's factor; a wrong subclaim if found, else a random one",
            PollardRho,
            _refuses_without_integer,
        ),
        Strategy("first", Role.BOB, "always the first subclaim", First),
        Strategy("malformed", Role.BOB, "indices that do not parse", MalformedBob),
    ),
}
