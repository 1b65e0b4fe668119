"""Naive recursive debate: the baseline that obfuscated arguments break (Section 7 of the
prover-estimator debate paper), stated as :mod:`debatekit.engine.nodes`.

A claims A(x). In each round k = d..1 she splits the current query ŷ^k into its subqueries y^k
and claims an answer to each, consistent with her claim about ŷ^k (the verifier checks
M_D(x, y^k, a) = her claim); B picks one subclaim to recurse on. In round 0 the verifier asks A,
with no context, for the proof bits the leaf names, queries the human-judgement oracle once and
A wins iff the oracle agrees with her claim about the leaf. There are no rewards besides winning:
A's payoff is 1 when she wins and 0 otherwise (a :class:`~debatekit.engine.nodes.Payoff` of one
entry).

Each message is a :class:`~debatekit.engine.nodes.Move` asked by a typed call of the player's
method and committed by the parsers of :mod:`~debatekit.protocols.recursive_engine` (players see
only parsed data); the oracle query is the :class:`~debatekit.engine.nodes.Judge`. A split that is
not plain data M_D is defined on, answers that are not q bits, answers inconsistent with her claim
or a proof bit that is not a bit lose for A; an index outside [q) loses for B; so does a player
that raises. The verifier reads A's q answers (q bits) with each split, whether the split parses
or not (``Move.bits``), so what a message costs does not depend on how it fails (and a replay
recounts it). A's proof is committed once per run, as in prover-estimator debate. The engine's
interpreters play (:func:`~debatekit.engine.play.play`), replay
(:func:`~debatekit.engine.record.walked`) and value (:func:`~debatekit.analysis.exact.expectation`,
each round memoised on its ``key``) the one statement, :func:`debate`.
"""

from __future__ import annotations

from typing import Any, Protocol

from debatekit.engine.boundary import as_bit, commit_plain, safe_repr
from debatekit.engine.nodes import Judge, Move, Node, Payoff
from debatekit.engine.nodes import Query as Asked
from debatekit.ledger import Malformed, Role
from debatekit.machine.decomposition import Decomposition, LeafOracle, Query
from debatekit.oracle import Oracle
from debatekit.prob import Dist
from debatekit.protocols.proof import CommittedProof, ProofTruth, implicit_proof, proof_move
from debatekit.protocols.recursive_engine import Seen, bit_of, commit_of, index_of, split_of
from debatekit.reader import Reader, word_width


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


def debate(
    decomposition: Decomposition, reader: Reader, prover: CommittedProof | None, seen: Seen | None = None
) -> Node:
    """The naive recursive protocol on one decomposition, as nodes (module docstring). ``prover``
    is A's committed proof that round 0 reads (None where its bits come from a record: replay);
    ``reader`` counts the proof bits read; ``seen`` notes A's claim. Each round is built when the
    one above ends (closures), so depth is bounded by nothing but the interpreters' loops."""
    D, q = decomposition, decomposition.width

    def lose(loser: Role, reason: str) -> Payoff:
        return Payoff((0.0 if loser is Role.ALICE else 1.0,), loser, reason)

    def claimed(claim: int) -> Node:
        if seen is not None:
            seen.claim = claim
        return round_(D.depth, D.root(), claim)

    def round_(level: int, query: Query, claimed: int) -> Node:
        """Round ``level``: A's split and answers (a subgame that depends only on its arguments)."""
        if level == 0:
            return final(query, claimed)
        return Move(
            Role.ALICE,
            lambda alice: alice.decompose(level, query, claimed),
            commit_of(lambda sent: _decomposition(D, level, query, claimed, sent), Role.ALICE, "decompose"),
            lambda split: challenge(level, query, claimed, *split),
            key=("naive round", level, query, claimed),
            lose=lose,
            what="decompose",
            bits=q,
        )

    def challenge(level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], bits: tuple[int, ...]) -> Node:
        return Move(
            Role.BOB,
            lambda bob: bob.challenge(level, query, claimed, subqueries, bits),
            commit_of(lambda sent: index_of(sent, q, Role.BOB, "challenge"), Role.BOB, "challenge"),
            lambda j: round_(level - 1, subqueries[j], bits[j]),
            lose=lose,
            what="challenge",
            bits=word_width(q),
        )

    def final(query: Query, claimed: int) -> Node:
        """Round 0: A's proof bits for the leaf, then the verifier's one query."""

        def judged(bits: tuple[int, ...]) -> Judge:
            def check() -> Any:
                o = yield Asked((query, bits))
                return Payoff((float(o == claimed),))

            return Judge(check)

        return proof_move(D.leaf(query), reader, prover, judged, lose, ("naive round", 0, query, claimed))

    return Move(
        Role.ALICE,
        lambda alice: alice.claim(),
        commit_of(bit_of("the claim A(x) ="), Role.ALICE, "claim"),
        claimed,
        lose=lose,
        what="claim",
        bits=1,
    )


def _decomposition(
    D: Decomposition, level: int, query: Query, claimed: int, sent: Any
) -> tuple[tuple[Query, ...], tuple[int, ...]]:
    """A's (subqueries, answers) as plain data: a split M_D is defined on and q bits whose M_D is
    her claim, else her forfeit."""
    pair = commit_plain(sent, Role.ALICE, "(subqueries, answers)")
    if not (type(pair) is tuple and len(pair) == 2):
        raise Malformed(Role.ALICE, f"{safe_repr(pair)} is not (subqueries, answers)")
    subqueries = split_of(D, query, level, pair[0])
    q, answers = D.width, pair[1]
    bits = tuple(as_bit(a) for a in answers) if type(answers) is tuple else ()
    if len(bits) != q or None in bits:
        raise Malformed(Role.ALICE, f"answers {safe_repr(answers)} are not {q} bits")
    if D.combine(query, level, bits) != claimed:  # type: ignore[arg-type]
        raise Malformed(Role.ALICE, f"answers {bits} do not give her claim {claimed} about {safe_repr(query)}")
    return subqueries, bits  # type: ignore[return-value]


def win_probability(
    decomposition: Decomposition,
    alice: Alice,
    bob: Bob,
    prover: CommittedProof | None = None,
    oracle: Oracle | None = None,
) -> float:
    """P[A wins] exactly (:func:`~debatekit.analysis.exact.expectation`), summing over mixed moves
    and the oracle's answer (strategies must be functions of their arguments); ``prover`` A's
    committed proof (by default committed from ``alice``), ``oracle`` the leaves' judge (by
    default the decomposition's, :class:`~debatekit.machine.decomposition.LeafOracle`)."""
    from debatekit.analysis.exact import expectation  # here: the protocol is stated without its analysis
    from debatekit.ledger import Ledger

    prover = prover if prover is not None else CommittedProof(lambda leaves: alice.proof(leaves))
    root = debate(decomposition, Reader(Ledger()), prover)
    judge = oracle or LeafOracle(decomposition)
    return float(expectation(root, {Role.ALICE: alice, Role.BOB: bob}, judge)[0])


class HonestAlice:
    """Claims L(x) and the correct answer to every subquery; the implicit proof's bits."""

    def __init__(self, decomposition: Decomposition):
        self.D = decomposition

    def claim(self) -> int:
        return int(self.D.truth(self.D.root(), self.D.depth) >= 0.5)

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        ys = self.D.split(query, level)
        return ys, tuple(int(self.D.truth(y, level - 1) >= 0.5) for y in ys)

    proof = implicit_proof


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
    """The unbounded challenger: a subclaim whose claimed answer is wrong of A's proof ũ, if any
    (else the first). ``truth`` is the truth of her proof (:class:`ProofTruth`): the claims are
    about ũ and round 0 reads ũ, so a challenger of the implicit proof u walks a liar whose ũ ≠ u
    to a leaf her own proof makes true (issue 22)."""

    def __init__(self, truth: ProofTruth):
        self.truth = truth

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int:
        for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)):
            if int(self.truth.truth(y, level - 1) >= 0.5) != a:
                return j
        return 0
