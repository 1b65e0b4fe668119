"""Naive recursive debate: the baseline that obfuscated arguments break (Section 7 of the
prover-estimator debate paper).

A claims A(x). In each round k = d..1 she splits the current query ŷ^k into its subqueries y^k
and claims an answer to each, consistent with her claim about ŷ^k (the verifier checks
M_D(x, y^k, a) = her claim); B picks one subclaim to recurse on. In round 0 the verifier asks A,
with no context, for the proof bits the leaf names, queries the human-judgement oracle once and
A wins iff the oracle agrees with her claim about the leaf. There are no rewards besides winning:
A's payoff is 1 when she wins and 0 otherwise.

A's proof is committed once per run, as in prover-estimator debate. Messages
cross the same :class:`~debatekit.protocols.recursive_engine.Boundary`: asked once by a typed
call, parsed inside one catch-all, players shown only parsed data, noted as committed when the
debate is recorded. A split that is not plain data M_D is defined on, answers that are not q
bits, answers inconsistent with her claim or a proof bit that is not a bit lose for A; an index
outside [q) loses for B; so does a player that raises. The verifier reads A's q answers (q bits)
with each split, whether the split parses or not, so what a message costs does not depend on how
it fails (and a replay recounts it). Randomness goes through the same
:class:`~debatekit.protocols.recursive_engine.Chance` as prover-estimator debate, so one
implementation plays, replays and computes exact values.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from debatekit.engine.boundary import as_bit, commit_plain, safe_repr
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Decomposition, LeafOracle, Query
from debatekit.oracle import Oracle
from debatekit.prob import Dist
from debatekit.protocols.proof import CommittedProof
from debatekit.protocols.recursive_engine import (
    Boundary,
    Chance,
    Exact,
    Record,
    bit_of,
    index_of,
    split_of,
    walk,
)
from debatekit.reader import word_width


class Alice(Protocol):
    def claim(self) -> int | Dist:
        """A(x) ∈ {0, 1}."""

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        """The split of ``query`` (plain data: ints, strings and tuples of them) and her answer to
        each subquery."""

    def proof(self, leaves: tuple[int, ...]) -> Any:
        """ũ at the positions ``leaves`` as a sequence of bits, asked of a context-free copy
        (:class:`~debatekit.protocols.proof.CommittedProof`)."""


class Bob(Protocol):
    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int | Dist:
        """The subclaim to recurse on, an index in [q)."""


class NaiveDebate(Boundary):
    """The naive recursive protocol on one decomposition; :meth:`value` is P[A wins] (Exact) or
    whether she won (Sampled). Rounds are walked without recursion
    (:func:`~debatekit.protocols.recursive_engine.walk`); ``prover`` is A's committed proof
    that round 0 reads, and ``oracle`` answers the verifier's leaf query, as in
    :class:`~debatekit.protocols.prover_estimator.Debate`."""

    def __init__(
        self,
        decomposition: Decomposition,
        alice: Alice,
        bob: Bob,
        chance: Chance,
        ledger: Ledger | None = None,
        record: Record | None = None,
        prover: CommittedProof | None = None,
        oracle: Oracle | None = None,
    ):
        self.D, self.alice, self.bob, self.chance = decomposition, alice, bob, chance
        self.ledger, self.record = ledger or Ledger(), record or Record()
        self.prover = prover if prover is not None else CommittedProof(lambda leaves: alice.proof(leaves))
        self.oracle = oracle or LeafOracle(decomposition)
        self.memo: dict[tuple[int, Query, int], float] = {}

    def lose(self, bad: Malformed) -> float:
        if self.record.forfeit is None:
            self.record.forfeit, self.record.reason = bad.sender, bad.reason
        return 0.0 if bad.sender is Role.ALICE else 1.0

    def value(self) -> float:
        total = 0.0
        claimed = self.receive(Role.ALICE, "claim", lambda: self.alice.claim(), 1, bit_of("the claim A(x) ="))
        for weight, claim in claimed:
            total += weight * (self.lose(claim) if isinstance(claim, Malformed) else self._claimed(claim))
        return float(total)

    def _claimed(self, claim: int) -> float:
        self.record.claim = claim
        root = (self.D.depth, self.D.root(), claim)
        return walk(root, self.outcomes, self.memo if self.chance.memoise else None, 0.0)

    def outcomes(self, node: tuple[int, Query, int]) -> list[tuple[float, float, Any]]:
        """One round: (probability, value if the debate ends here, next round or None)."""
        level, query, claimed = node
        if level == 0:
            return self._final(query, claimed)
        q = self.D.width
        ((_, sent),) = self.receive(
            Role.ALICE, "decompose", lambda: self.alice.decompose(level, query, claimed), q,
            lambda message: self._decomposition(level, query, claimed, message), mixed=False,
        )  # fmt: skip
        if isinstance(sent, Malformed):
            return [(1.0, self.lose(sent), None)]
        subqueries, bits = sent
        out: list[tuple[float, float, Any]] = []
        chosen = self.receive(
            Role.BOB, "challenge", lambda: self.bob.challenge(level, query, claimed, subqueries, bits), word_width(q),
            lambda message: index_of(message, q, Role.BOB, "challenge"),
        )  # fmt: skip
        for weight, j in chosen:
            if isinstance(j, Malformed):
                out.append((weight, self.lose(j), None))
            else:
                out.append((weight, 0.0, (level - 1, subqueries[j], bits[j])))
        return out

    def _decomposition(
        self, level: int, query: Query, claimed: int, sent: Any
    ) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        """A's (subqueries, answers) as plain data: a split M_D is defined on and q bits whose
        M_D is her claim, else her forfeit."""
        pair = commit_plain(sent, Role.ALICE, "(subqueries, answers)")
        if not (type(pair) is tuple and len(pair) == 2):
            raise Malformed(Role.ALICE, f"{safe_repr(pair)} is not (subqueries, answers)")
        subqueries = split_of(self.D, query, level, pair[0])
        q, answers = self.D.width, pair[1]
        bits = tuple(as_bit(a) for a in answers) if type(answers) is tuple else ()
        if len(bits) != q or None in bits:
            raise Malformed(Role.ALICE, f"answers {safe_repr(answers)} are not {q} bits")
        if self.D.combine(query, level, bits) != claimed:  # type: ignore[arg-type]
            raise Malformed(Role.ALICE, f"answers {bits} do not give her claim {claimed} about {safe_repr(query)}")
        return subqueries, bits  # type: ignore[return-value]

    def _final(self, query: Query, claimed: int) -> list[tuple[float, float, Any]]:
        try:
            bits = self.proof_bits(self.D.leaf(query))
        except Malformed as bad:
            return [(1.0, self.lose(bad), None)]
        return [(w, float(o == claimed), None) for w, o in self.chance.judge(self.oracle, (query, bits), self.ledger)]


def win_probability(decomposition: Decomposition, alice: Alice, bob: Bob) -> float:
    """P[A wins] exactly, summing over mixed moves and the oracle's answer."""
    return NaiveDebate(decomposition, alice, bob, Exact()).value()


class HonestAlice:
    """Claims L(x) and the correct answer to every subquery; the implicit proof's bits."""

    def __init__(self, decomposition: Decomposition):
        self.D = decomposition

    def claim(self) -> int:
        return int(self.D.truth(self.D.root(), self.D.depth) >= 0.5)

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        ys = self.D.split(query, level)
        return ys, tuple(int(self.D.truth(y, level - 1) >= 0.5) for y in ys)

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        return np.fromiter((self.D.proof(j) for j in leaves), dtype=np.uint8, count=len(leaves))


class HonestBob:
    """The honest challenger, bounded like the provers: a subclaim it can show wrong
    (:meth:`~debatekit.machine.decomposition.Decomposition.bounded_truth`); failing that, a
    uniformly random one among those it cannot decide; the first when all are right."""

    def __init__(self, decomposition: Decomposition):
        self.D = decomposition

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int | Dist:
        unknown = []
        for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)):
            known = self.D.bounded_truth(y, level - 1)
            if known is None:
                unknown.append(j)
            elif int(known >= 0.5) != a:
                return j
        return Dist.uniform(unknown) if unknown else 0


class Omniscient:
    """The unbounded challenger: a subclaim whose claimed answer is wrong, if any (else the first)."""

    def __init__(self, decomposition: Decomposition):
        self.D = decomposition

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int:
        for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)):
            if int(self.D.truth(y, level - 1) >= 0.5) != a:
                return j
        return 0
