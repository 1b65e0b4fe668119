"""LLM players of the recursive protocols: prover-estimator debate (Figure 2 and Theorem 6.1 of
the prover-estimator debate paper) and naive recursive debate (its Section 7).

Each player believes the decomposition's claims as they come out with its LLM as the judge: the
same decomposition M_D rebuilt with the player's judgements in place of the judge's
(:func:`believed`). A plan's claim tree keeps its LLM's P[yes] on each leaf's question, combined
up the tree as independent sub-claims (:meth:`ClaimTree.truth
<debatekit.problems.plan.ClaimTree.truth>`); the natural decomposition of a plan's transcript
machine (Section 5) is run with the LLM's answers, yes iff P[yes] >= 1/2. The players are then the
protocols' honest strategies on those beliefs:

- prover-estimator A: Lemma A.5's honest A on her beliefs g: she claims A(x) = [g(root) >= 1/2],
  answers [g(y) >= 1/2], splits as the decomposition does (her model may judge, not re-draw, the
  argument: M_D accepts only its own splits), plays A^k by rule (13) from g(ŷ^k) - p_k with ε,
  recurses on the sub-claim whose estimate B^k_j is furthest from g(y_j), and gives her own
  transcript as her proof bits;
- prover-estimator B: the truthful estimator of Lemma A.4 (δ = 0) on his beliefs: p_d = g_B(root),
  B^k_i = g_B(y_i) (the sub-claims are independent, so the prefix z_<i changes nothing);
- naive A: claims as above and splits into the answer vector most probable under g among those
  M_D maps to the claim she defends (so her answers are consistent whatever her beliefs);
- naive B: challenges the sub-claim whose answer is furthest from his belief.

On the natural decomposition the claims are about A's proof (her transcript), so B reads it as
the truthful estimator does, from her committed proof (Definition 5.2,
:func:`~debatekit.players.estimator.proof_truth`), and judges its steps with his model.

Departure: Lemma A.5's A knows the correct answers g and Lemma A.4's B is indistinguishable from
them; these hold their model's, so Theorem 6.1's promises hold of them only as far as the model
agrees with the judge. The protocols' verifier is unchanged and asks the run's oracle.
"""

from __future__ import annotations

import asyncio
import itertools
import math

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.players.base import LLM, YES_AT, Judgements, strategy
from debatekit.machine.decomposition import Decomposition, NaturalDecomposition, Query, natural
from debatekit.machine.transcript import StepKind
from debatekit.oracle import TableOracle, settled
from debatekit.players.base import Seat, Strategy
from debatekit.players.estimator import proof_truth
from debatekit.problems.plan import ClaimTree
from debatekit.problems.registry import Instance
from debatekit.protocols.proof import ProofTruth
from debatekit.protocols.prover_estimator import (
    HonestAlice,
    Situation,
    TruthfulBob,
    decomposition_of,
    rules_of,
)

MAX_LEAVES = 4096
"""The most leaves a decomposition may have: an LLM player judges every one."""
MAX_WIDTH = 12
"""The widest split naive A weighs every answer vector of (2^q)."""


def refuses(instance: Instance) -> str | None:
    """Why LLM players cannot argue over the instance's decomposition, or None."""
    found = instance.recursive_decomposition()
    if not isinstance(found, ClaimTree | NaturalDecomposition):
        return "LLM players argue over a plan's claim tree or the natural decomposition of a transcript machine"
    if found.width > MAX_WIDTH or found.width**found.depth > MAX_LEAVES:
        return (
            f"its decomposition has width {found.width} and depth {found.depth}; LLM players judge every leaf "
            f"(at most {MAX_LEAVES}, width at most {MAX_WIDTH})"
        )
    return None


async def believed(decomposition: Decomposition, judgements: Judgements, proof: np.ndarray | None) -> Decomposition:
    """``decomposition`` with the player's judgements in place of the judge's (module docstring).
    On the natural decomposition the steps judged are those of ``proof`` (x and a transcript:
    another's proof, read by cross-examination), or of the player's own transcript when None."""
    if isinstance(decomposition, ClaimTree):
        level = [decomposition.root()]
        for k in range(decomposition.depth, 0, -1):
            level = [y for query in level for y in decomposition.split(query, k)]
        questions = [decomposition.question(leaf) for leaf in level]
        answers = await asyncio.gather(*(judgements.p_yes(q) for q in questions))
        judge = TableOracle(dict(zip(questions, answers, strict=True)))
        return ClaimTree(decomposition.plan, judge, decomposition.depth, decomposition.width)
    assert isinstance(decomposition, NaturalDecomposition)  # what `refuses` lets through
    machine, x = decomposition.machine, decomposition.x
    if proof is None:
        proof = np.concatenate([x, await judgements.transcript(machine, x)])
    questions = list(
        dict.fromkeys(
            machine.rule(t, tuple(int(proof[a]) for a in machine.relevant(t)))
            for t in range(machine.length)
            if machine.kind(t) is StepKind.ORACLE
        )
    )
    answers = await asyncio.gather(*(judgements.p_yes(q) for q in questions))
    judge = TableOracle({q: float(p >= YES_AT) for q, p in zip(questions, answers, strict=True)})
    return natural(machine, x, judge, decomposition.width)


class _Prover:
    """A's beliefs, formed on first use (her model's calls, once per debate)."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.judgements = seat, Judgements(llm, seat.role)
        self._honest: HonestAlice | None = None

    def honest(self) -> HonestAlice:
        """Lemma A.5's honest A on her beliefs."""
        if self._honest is None:
            beliefs = settled(believed(decomposition_of(self.seat.instance), self.judgements, None))
            self._honest = HonestAlice(beliefs, rules_of(self.seat))
        return self._honest

    def claim(self) -> int:
        return self.honest().claim()

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        return self.honest().proof(leaves)


class ProverEstimatorAlice(_Prover):
    """Prover-estimator A: Lemma A.5's play on her LLM's beliefs (module docstring)."""

    def answer(self, level: int, query: Query) -> int:
        return self.honest().answer(level, query)

    def direction(self, s: Situation) -> int:
        return self.honest().direction(s)

    def queries(self, s: Situation) -> tuple[Query, ...]:
        return self.honest().queries(s)

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        return self.honest().recurse(s, subqueries, estimates, z)


class NaiveAlice(_Prover):
    """Naive recursive A: her claim, and at each split the answers she believes most probable among
    those that give the claim she defends."""

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        D = self.honest().D
        ys = D.split(query, level)
        p = [D.truth(y, level - 1) for y in ys]

        def likelihood(z: tuple[int, ...]) -> float:
            return math.prod(pi if zi else 1 - pi for pi, zi in zip(p, z, strict=True))

        vectors = list(itertools.product((0, 1), repeat=len(ys)))
        defended = [z for z in vectors if D.combine(query, level, z) == claimed] or vectors
        return ys, max(defended, key=likelihood)


class _Estimator:
    """B's beliefs about A's claims, formed on first use: on a claim tree his LLM's judgements of
    its leaves; on the natural decomposition his LLM's judgements of the steps of A's proof, which
    he reads from her committed proof."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.judgements = seat, Judgements(llm, seat.role)
        self._truth: ProofTruth | None = None

    def truth(self) -> ProofTruth:
        if self._truth is None:
            D = decomposition_of(self.seat.instance)
            proof = self._her_proof(D) if isinstance(D, NaturalDecomposition) else None
            beliefs = settled(believed(D, self.judgements, proof))
            self._truth = ProofTruth(beliefs, None if proof is None else lambda j: int(proof[j]))
        return self._truth

    def _her_proof(self, D: NaturalDecomposition) -> np.ndarray:
        reader = proof_truth(self.seat)  # her committed proof (the implicit proof's when she gives it)
        positions = tuple(range(D.proof_length))
        if reader.proof is None:
            return np.array([D.proof(j) for j in positions], dtype=np.uint8)
        return np.array(reader.bits(positions), dtype=np.uint8)


class ProverEstimatorBob(_Estimator):
    """Prover-estimator B: the truthful estimator on his LLM's beliefs (module docstring)."""

    def initial(self) -> float:
        return TruthfulBob(self.truth()).initial()

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return TruthfulBob(self.truth()).conditional(s, subqueries, i, prefix)


class NaiveBob(_Estimator):
    """Naive recursive B: the sub-claim whose answer is furthest from his belief."""

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int:
        truth = self.truth()
        gaps = [abs(truth.truth(y, level - 1) - a) for y, a in zip(subqueries, answers, strict=True)]
        return int(np.argmax(gaps))


def prover_estimator_alice(llm: LLM) -> Strategy:
    return strategy(
        llm, Role.ALICE, f"{llm.name} believes each claim; Lemma A.5's play on its beliefs",
        lambda s: ProverEstimatorAlice(s, llm), refuses,
    )  # fmt: skip


def prover_estimator_bob(llm: LLM) -> Strategy:
    return strategy(
        llm, Role.BOB, f"{llm.name} estimates each sub-claim from its P[yes]", lambda s: ProverEstimatorBob(s, llm),
        refuses,
    )  # fmt: skip


def naive_alice(llm: LLM) -> Strategy:
    return strategy(
        llm, Role.ALICE, f"{llm.name} claims and splits by its beliefs", lambda s: NaiveAlice(s, llm), refuses
    )


def naive_bob(llm: LLM) -> Strategy:
    return strategy(
        llm, Role.BOB, f"{llm.name} challenges the answer it doubts most", lambda s: NaiveBob(s, llm), refuses
    )


PROVER_ESTIMATOR = {Role.ALICE: prover_estimator_alice, Role.BOB: prover_estimator_bob}
"""Prover-estimator debate's LLM players (its ``ProtocolSpec.llm``)."""
NAIVE = {Role.ALICE: naive_alice, Role.BOB: naive_bob}
"""Naive recursive debate's LLM players (its ``ProtocolSpec.llm``)."""
