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
- naive B: challenges the sub-claim his model doubts most (issue 22): on a claim tree the answer
  furthest from his belief g_B; on the natural decomposition, where a sub-claim says a range of
  her proof's steps is right, first a range holding a step the verifier computes and she got
  wrong (a certain catch), else the range whose least likely judged bit his model finds least
  likely, weighed by its P[yes] rather than rounded to a bit, so a faint doubt about a right
  step does not spend his one path down the tree; why, in the aside (``decided``).

Liars (``llm-liar:PROVIDER/MODEL``) argue the answer opposite to their model's, each saying why in
the debate's aside (``lied``): A claims 1 - [g(root) >= 1/2]; naive A defends it as above, with the
answers her model finds most probable among those that give her claim, so the subclaims she
falsifies are those it finds most plausibly false; prover-estimator A then plays Lemma A.5 on her
beliefs (the built-in ``wrong-answer`` with her model's beliefs); prover-estimator B estimates
1 - his belief everywhere (``inverted`` on his beliefs); naive B, where he believes every answer,
challenges the one his model doubts most (the judge's likeliest disagreement), and where he
doubts one, the answer he believes most, so that the lie is never examined.

On the natural decomposition the claims are about A's proof (her transcript), so B reads it as
the truthful estimator does, from her committed proof (Definition 5.2,
:func:`~debatekit.players.estimator.proof_truth`), and judges its steps with his model, keeping
its confidence (issue 22): a range of her steps is right with probability 0 when a step the
verifier computes is wrong, else the product of her judged bits' likelihoods under his model, so
prover-estimator B estimates his doubt where the model has one rather than a rounded bit.

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
from debatekit.oracle import TableOracle, aside, settled
from debatekit.players.base import Seat, Side, Strategy
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


async def believed(decomposition: Decomposition, judgements: Judgements) -> Decomposition:
    """``decomposition`` with the player's judgements in place of the judge's (module docstring);
    on the natural decomposition, the steps of the player's own transcript, each yes iff its
    P[yes] >= 1/2 (the natural decomposition needs a deterministic judge)."""
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
            beliefs = settled(believed(decomposition_of(self.seat.instance), self.judgements))
            self._honest = HonestAlice(beliefs, rules_of(self.seat))
        return self._honest

    def claim(self) -> int:
        return self.honest().claim()

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        return self.honest().proof(leaves)


class _Liar(_Prover):
    """A on the side her model does not believe: the claim it finds false."""

    def claim(self) -> int:
        D = self.honest().D
        believed = D.truth(D.root(), D.depth)
        lie = int(believed < YES_AT)
        why = f"her model gives the root claim P[yes] {believed:.3g}; she argues the other answer"
        aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "claim": lie, "why": why})
        return lie


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

        def likelihood(z: tuple[int, ...]) -> tuple[float, int]:
            """Its probability under her beliefs, then (among the impossible) how many answers she believes."""
            believed = sum(zi == (pi >= YES_AT) for pi, zi in zip(p, z, strict=True))
            return math.prod(pi if zi else 1 - pi for pi, zi in zip(p, z, strict=True)), believed

        vectors = list(itertools.product((0, 1), repeat=len(ys)))
        defended = [z for z in vectors if D.combine(query, level, z) == claimed] or vectors
        return ys, max(defended, key=likelihood)


class ProverEstimatorLiar(_Liar, ProverEstimatorAlice):
    """Prover-estimator A arguing the claim her model finds false, then Lemma A.5's play on her beliefs."""


class NaiveLiar(_Liar, NaiveAlice):
    """Naive A arguing the claim her model finds false, each split the answers it finds most probable
    among those that give her claim (module docstring)."""

    def decompose(self, level: int, query: Query, claimed: int) -> tuple[tuple[Query, ...], tuple[int, ...]]:
        ys, z = super().decompose(level, query, claimed)
        D = self.honest().D
        p = [D.truth(y, level - 1) for y in ys]
        false = [i for i, (pi, zi) in enumerate(zip(p, z, strict=True)) if zi != (pi >= YES_AT)]
        aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "level": level, "falsified": false,
               "why": f"answers {list(z)} give her claim {claimed}: the most probable such under her model "
                      f"(P[yes] {[round(pi, 3) for pi in p]})"})  # fmt: skip
        return ys, z


class _Estimator:
    """B's beliefs about A's claims, formed on first use: on a claim tree his LLM's judgements of
    its leaves (:meth:`truth`); on the natural decomposition his LLM's judgements of the steps of
    A's proof, which he reads from her committed proof (:meth:`_believed`)."""

    def __init__(self, seat: Seat, llm: LLM):
        self.seat, self.judgements = seat, Judgements(llm, seat.role)
        self._truth: ProofTruth | None = None
        self._read: np.ndarray | None = None

    def truth(self) -> ProofTruth:
        """g_B on a claim tree: his model's P[yes] on each leaf, combined up the tree."""
        if self._truth is None:
            self._truth = ProofTruth(settled(believed(decomposition_of(self.seat.instance), self.judgements)), None)
        return self._truth

    def _believed(self, D: NaturalDecomposition, queries: tuple[Query, ...]) -> list[list[float]]:
        """For each range of her proof's steps, how likely each of its steps is under his model:
        [0.0] where a step is wrong without the judge (the proof's copy of x, a computed step, an
        output of 0), else the likelihood of her bit at each judged step (none: [1.0])."""
        return settled(self._ranges(D, queries))

    async def _ranges(self, D: NaturalDecomposition, queries: tuple[Query, ...]) -> list[list[float]]:
        return list(await asyncio.gather(*(self._range(D, y) for y in queries)))

    async def _range(self, D: NaturalDecomposition, query: Query) -> list[float]:
        machine, proof = D.machine, self._proof(D)
        start, end = query  # type: ignore[misc]
        likely = [1.0]
        for t in range(start, min(end, machine.length)):
            reads = machine.relevant(t)
            inputs, written = tuple(int(proof[a]) for a in reads), int(proof[machine.offset + t])
            copied = all(proof[a] == D.x[a] for a in reads if a < machine.offset)
            wrong = machine.kind(t) is StepKind.COMPUTE and written != machine.rule(t, inputs)
            if not copied or wrong or (t == machine.length - 1 and written == 0):
                return [0.0]
            if machine.kind(t) is StepKind.ORACLE:
                likely.append(await self.judgements.likelihood(machine, proof, t))
        return likely

    def _proof(self, D: NaturalDecomposition) -> np.ndarray:
        """Her committed proof (the implicit proof's when she gives it), read once per debate."""
        if self._read is None:
            reader = proof_truth(self.seat)
            positions = np.arange(D.proof_length)
            if reader.proof is None:
                self._read = np.array([D.proof(int(j)) for j in positions], dtype=np.uint8)
            else:
                self._read = reader.proof_bits(positions)
        return self._read


class ProverEstimatorBob(_Estimator):
    """Prover-estimator B: the truthful estimator on his LLM's beliefs (module docstring)."""

    def initial(self) -> float:
        D = decomposition_of(self.seat.instance)
        if isinstance(D, NaturalDecomposition):
            return self._weighed(D, D.root())
        return TruthfulBob(self.truth()).initial()

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        D = decomposition_of(self.seat.instance)
        if isinstance(D, NaturalDecomposition):
            return self._weighed(D, subqueries[i])
        return TruthfulBob(self.truth()).conditional(s, subqueries, i, prefix)

    def _weighed(self, D: NaturalDecomposition, query: Query) -> float:
        """P[the range of her proof's steps is right] with its steps independent under his model:
        the product of their likelihoods (the sub-claims of a split are independent, so the prefix
        changes nothing)."""
        (likely,) = self._believed(D, (query,))
        return math.prod(likely)


class NaiveBob(_Estimator):
    """Naive recursive B: the sub-claim his model doubts most (module docstring), saying why in the
    aside (``decided``)."""

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int:
        doubts = self.doubts(level, subqueries, answers)
        i = int(np.argmax(doubts))
        why = f"her answer {answers[i]} to sub-claim {i} is the one his model doubts most ({doubts[i]:.3g})"
        if doubts[i] == 1 and isinstance(decomposition_of(self.seat.instance), NaturalDecomposition):
            why += ", where a step the verifier computes would settle it against her: a certain catch"
        aside({"decided": self.seat.role.value, "model": self.judgements.llm.name, "level": level, "challenge": i,
               "why": why})  # fmt: skip
        return i

    def doubts(self, level: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]) -> list[float]:
        """How far each answer is from his belief: |g_B(y) - a| on a claim tree (his model's P[yes]
        combined up the tree); on the natural decomposition, where a sub-claim says that a range of
        her proof's steps is right, 1 where a step the verifier computes is wrong (a certain catch),
        else his doubt of the least likely judged bit in the range (the range right when every
        step is, so a claim that it is wrong is doubted as much as the range is believed)."""
        D = decomposition_of(self.seat.instance)
        if not isinstance(D, NaturalDecomposition):
            truth = self.truth()
            return [abs(truth.truth(y, level - 1) - a) for y, a in zip(subqueries, answers, strict=True)]
        right = [min(likely) for likely in self._believed(D, subqueries)]
        return [1 - r if a else r for r, a in zip(right, answers, strict=True)]


class ProverEstimatorLiarBob(ProverEstimatorBob):
    """Prover-estimator B estimating 1 - his belief everywhere."""

    def initial(self) -> float:
        believed = super().initial()
        why = f"his model gives her claim's truth {believed:.3g}; he estimates 1 - his belief throughout"
        aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "why": why})
        return 1 - believed

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return 1 - super().conditional(s, subqueries, i, prefix)


class NaiveLiarBob(NaiveBob):
    """Naive B on the side his model does not believe (module docstring)."""

    def challenge(
        self, level: int, query: Query, claimed: int, subqueries: tuple[Query, ...], answers: tuple[int, ...]
    ) -> int:
        gaps = self.doubts(level, subqueries, answers)
        if max(gaps) > 1 - YES_AT:
            i, why = int(np.argmin(gaps)), "he doubts an answer, so he challenges the one he believes most"
        else:
            i, why = int(np.argmax(gaps)), "he believes every answer, so he challenges the one he doubts most"
        aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "level": level, "challenge": i,
               "why": f"{why} (his doubts {[round(g, 3) for g in gaps]})"})  # fmt: skip
        return i


def prover_estimator_alice(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.ALICE, f"{llm.name} claims what it believes false; Lemma A.5's play on its beliefs",
            lambda s: ProverEstimatorLiar(s, llm), refuses, side,
        )  # fmt: skip
    return strategy(
        llm, Role.ALICE, f"{llm.name} believes each claim; Lemma A.5's play on its beliefs",
        lambda s: ProverEstimatorAlice(s, llm), refuses,
    )  # fmt: skip


def prover_estimator_bob(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.BOB, f"{llm.name} estimates each sub-claim as 1 - its P[yes]",
            lambda s: ProverEstimatorLiarBob(s, llm), refuses, side,
        )  # fmt: skip
    return strategy(
        llm, Role.BOB, f"{llm.name} estimates each sub-claim from its P[yes]", lambda s: ProverEstimatorBob(s, llm),
        refuses,
    )  # fmt: skip


def naive_alice(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.ALICE, f"{llm.name} claims what it believes false, splitting by its beliefs",
            lambda s: NaiveLiar(s, llm), refuses, side,
        )  # fmt: skip
    return strategy(
        llm, Role.ALICE, f"{llm.name} claims and splits by its beliefs", lambda s: NaiveAlice(s, llm), refuses
    )


def naive_bob(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.BOB, f"{llm.name} challenges where the judge likeliest disputes, lets a doubted answer stand",
            lambda s: NaiveLiarBob(s, llm), refuses, side,
        )  # fmt: skip
    return strategy(
        llm, Role.BOB, f"{llm.name} challenges the answer it doubts most", lambda s: NaiveBob(s, llm), refuses
    )


PROVER_ESTIMATOR = {Role.ALICE: prover_estimator_alice, Role.BOB: prover_estimator_bob}
"""Prover-estimator debate's LLM players (its ``ProtocolSpec.llm``)."""
NAIVE = {Role.ALICE: naive_alice, Role.BOB: naive_bob}
"""Naive recursive debate's LLM players (its ``ProtocolSpec.llm``)."""
