"""Natural-language problems: a plan of steps (issue 11, item 2), the typed model; reading and
checking a plan file is :mod:`debatekit.problems.plan_file`.

A plan is the machine M of the doubly-efficient debate paper's "Example for Theorem 6.2" (Section
6): a researcher's steps in words. Each step is either a **question** for the judge, reading the
earlier steps it depends on (its relevant coordinates I(t), shown to the judge as context lines),
or a **computation** over earlier steps from a closed set: ``and``, ``or``, ``not``,
``majority`` (more than half), ``at-least`` (k of them). The last step is the answer. Each
question states its ground truth ``p_yes``, the probability that the judge says yes, so the
answer's probability P[M = 1] and the Lipschitz constant K (Definition 6.1) follow exactly.

The transcript machine asks, at question step t, the :class:`~debatekit.oracle.Question` whose
``text`` is the step's and whose ``context`` renders y_{I(t)} one line a step, e.g. ``"Step 2
(Study A has a clear methodological flaw): no"``. **The ground-truth judge answers a question by
its text alone**: P[yes] is the step's ``p_yes`` whatever its context says (so a question's
answer is independent of the steps it reads, and question texts must be unique). A person or a
model of the judge may read the context; the ground truth does not.

Each plan becomes a problem (:func:`~debatekit.problems.plan_file.register_plan`), whose size is
T and whose instances are the plan (``truth`` as stated) and its variant. Its protocols follow
from the plan: cross-examination (Theorem 5.3) and naive recursion when every ``p_yes`` is 0 or 1
(they assume a deterministic oracle), stochastic debate (Theorem 6.2) always, with K computed
below, and prover-estimator debate when the plan has a recursive decomposition:
:class:`ClaimTree` when its steps form a uniform tree of claims, else the natural decomposition of
its machine (Section 5) when it is deterministic. A claim tree is not checked for
(ε, ρ)-stability (Definition 5.3); ``debatekit.analysis.stability`` does that.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import product
from typing import Any

import numpy as np

from debatekit.machine.decomposition import Decomposition, Judged, Query, natural
from debatekit.machine.transcript import MachineBuilder, TableMachine
from debatekit.oracle import FunctionOracle, Oracle, Question
from debatekit.problems.registry import Feature, Instance

MAX_LIVE = 20
"""The most earlier steps that may stay relevant at once (read by a later step): the exact
ground truth tabulates their 2^MAX_LIVE values."""


class Kind(Enum):
    """A step's kind, as the plan file spells it."""

    QUESTION = "question"
    AND = "and"
    OR = "or"
    NOT = "not"
    MAJORITY = "majority"
    AT_LEAST = "at-least"


@dataclass(frozen=True)
class Ask:
    """A question for the judge: y_t = O(Question(text, y_{I(t)} as lines)), P[yes] = ``p_yes``."""

    id: str
    claim: str
    reads: tuple[int, ...]
    text: str
    p_yes: float

    def probability(self, bits: tuple[int, ...]) -> float:
        """P[y_t = 1 | y_{I(t)} = bits] under the ground truth: ``p_yes``, whatever the context."""
        return self.p_yes


@dataclass(frozen=True)
class Compute:
    """A computation over earlier steps: every operation is a function of how many are yes."""

    id: str
    claim: str
    reads: tuple[int, ...]
    op: Kind
    k: int = 0
    """The threshold of ``at-least``."""

    def holds(self, ones: int, n: int) -> bool:
        """The operation on n bits of which ``ones`` are 1."""
        return OPERATIONS[self.op](ones, n, self.k)

    def evaluate(self, bits: Sequence[int]) -> int:
        return int(self.holds(sum(bits), len(bits)))

    def probability(self, bits: tuple[int, ...]) -> float:
        return float(self.evaluate(bits))


Step = Ask | Compute
OPERATIONS: dict[Kind, Callable[[int, int, int], bool]] = {
    Kind.AND: lambda ones, n, k: ones == n,
    Kind.OR: lambda ones, n, k: ones >= 1,
    Kind.NOT: lambda ones, n, k: ones == 0,
    Kind.MAJORITY: lambda ones, n, k: 2 * ones > n,
    Kind.AT_LEAST: lambda ones, n, k: ones >= k,
}
"""Each computation as a function of (yes count, steps read, k): every one depends on the count."""


@dataclass(frozen=True)
class Plan:
    """One instance of a plan: its steps, the truth it states, and what the ground truth gives."""

    name: str
    title: str
    where: str
    """The file it was read from, for messages."""
    source: str
    note: str
    truth: bool
    steps: tuple[Step, ...]
    probability: float
    """P[M = 1]: the probability that the answer is yes under the ground truth."""
    lipschitz: float
    """K of Definition 6.1 in the Lean form, as the hybrid bound (:func:`ground_truth`)."""

    @property
    def deterministic(self) -> bool:
        """Every question's ground truth is certain (P[yes] in {0, 1})."""
        return all(s.p_yes in (0.0, 1.0) for s in self.steps if isinstance(s, Ask))

    def question(self, step: Ask, *bits: int) -> Question:
        """The question step ``step`` asks when its relevant coordinates y_{I(t)} are ``bits``."""
        lines = zip(step.reads, bits, strict=True)
        return Question(
            step.text, tuple(f"Step {r + 1} ({self.steps[r].claim}): {'yes' if b else 'no'}" for r, b in lines)
        )

    def judge(self) -> Oracle:
        """The ground-truth judge: P[yes] of a question is the ``p_yes`` of the step with its text."""
        table = {s.text: s.p_yes for s in self.steps if isinstance(s, Ask)}

        def p_yes(query: Any) -> float:
            if not isinstance(query, Question) or query.text not in table:
                raise ValueError(f"{query!r} is not a question of the plan {self.name}")
            return table[query.text]

        return FunctionOracle(p_yes, deterministic=self.deterministic)

    def machine(self) -> TableMachine:
        """The transcript machine: step t of the plan is step t of M (no input bits, T = len(steps))."""
        b = MachineBuilder(inputs=0)
        for step in self.steps:
            if isinstance(step, Ask):
                b.ask(functools.partial(self.question, step), *step.reads)
            else:
                b.compute(lambda *bits, step=step: step.evaluate(bits), *step.reads)
        return b.build()

    @property
    def features(self) -> frozenset[Feature]:
        """What its instances carry, so the protocols whose assumptions the plan meets (module
        docstring): M with K always; certainty when every judgement is; a decomposition when the
        plan is certain or a claim tree."""
        certain = self.deterministic
        decomposed = certain or ClaimTree.shape(self) is not None
        return frozenset(
            {Feature.TRANSCRIPT, Feature.LIPSCHITZ}
            | ({Feature.DETERMINISTIC} if certain else set())
            | ({Feature.DECOMPOSITION} if decomposed else set())
        )

    def instance(self) -> Instance:
        """M, the ground-truth judge, K, and the recursive decomposition (a claim tree, else the
        natural one of a deterministic plan, built on first use)."""
        oracle, machine, x = self.judge(), self.machine(), np.zeros(0, dtype=np.uint8)
        tree = ClaimTree.of(self, oracle)
        decomposition: Decomposition | Callable[[], Decomposition] | None = tree
        if tree is None and self.deterministic:
            decomposition = lambda: natural(machine, x, oracle)  # noqa: E731
        return Instance(
            self.name, len(self.steps), self.truth, x, oracle=oracle, machine=machine, lipschitz=self.lipschitz,
            decomposition=decomposition,
        )  # fmt: skip


class ClaimTree(Decomposition):
    """A plan whose steps form a uniform tree of claims, as the recursive decomposition M_D of
    Definition 5.1 (prover-estimator debate paper): the answer splits into the q steps it reads,
    each of those into its q, down to questions at depth d; every step is read exactly once.

    A query is a step's id. At level k ≥ 1 it is a computation; its split is the steps it reads,
    in order, and M_D is its operation. At level 0 it is a question that reads no step: it names
    no proof bits (m = 0) and is judged by asking the plan's judge its :class:`Question`
    (:meth:`question`). Sub-claims are independent (each step is read once), so the correct
    answer g of a step is its probability under the judge, computed from its children's."""

    def __init__(self, plan: Plan, oracle: Oracle, depth: int, width: int):
        self.plan, self.oracle, self.depth, self.width = plan, oracle, depth, width
        self._steps = {s.id: s for s in plan.steps}
        self._truth: dict[Query, float] = {}

    @staticmethod
    def shape(plan: Plan) -> tuple[int, int] | None:
        """(d, q) when the plan is a uniform tree: the answer and every computation below it read
        q >= 2 steps, the questions (reading none) are all at depth d, every step is in the tree
        exactly once; else None."""
        steps = plan.steps
        width = len(steps[-1].reads)
        level, depth, seen = [len(steps) - 1], 0, [len(steps) - 1]
        while width >= 2 and all(isinstance(steps[t], Compute) and len(steps[t].reads) == width for t in level):
            level = [r for t in level for r in steps[t].reads]
            depth, seen = depth + 1, seen + level
        leaves = all(isinstance(steps[t], Ask) and not steps[t].reads for t in level)
        return (depth, width) if depth and leaves and sorted(seen) == list(range(len(steps))) else None

    @classmethod
    def of(cls, plan: Plan, oracle: Oracle) -> ClaimTree | None:
        """The plan's claim tree, judged by ``oracle``, or None when its steps form none."""
        shape = cls.shape(plan)
        return None if shape is None else cls(plan, oracle, *shape)

    def root(self) -> Query:
        return self.plan.steps[-1].id

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        return tuple(self.plan.steps[r].id for r in self._steps[query].reads)

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        step = self._steps[query]
        assert isinstance(step, Compute)
        return step.evaluate(answers)

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def question(self, query: Query) -> Question:
        """The question a leaf puts to the judge (it reads no step, so its context is empty)."""
        step = self._steps[query]
        assert isinstance(step, Ask)
        return self.plan.question(step)

    def judged(self, query: Query, bits: tuple[int, ...]) -> Judged:
        """Every leaf is the judge's answer to its question."""
        return Judged(self.question(query), 1, 0)

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        if bits:
            raise ValueError(f"a question of the claim tree names no proof bits, got {len(bits)}")
        p = self.oracle.probability(self.question(query))
        if p is None:
            raise ValueError("the claim tree needs a judge with known probabilities")
        return float(p)

    def proof(self, j: int) -> int:
        raise IndexError(f"a claim tree has no implicit proof (m = 0), asked for u_{j}")

    def truth(self, query: Query, level: int) -> float:
        if query not in self._truth:
            step = self._steps[query]
            if isinstance(step, Ask):
                self._truth[query] = self.judge(query, ())
            else:
                counts = np.ones(1)  # P[c of the children so far are yes]
                for child in self.split(query, level):
                    p = self.truth(child, level - 1)
                    counts = np.append(counts * (1 - p), 0.0) + np.append(0.0, counts * p)
                width = len(step.reads)
                self._truth[query] = float(sum(w for c, w in enumerate(counts) if step.holds(c, width)))
        return self._truth[query]


def ground_truth(steps: Sequence[Step], fail: Callable[[str, int], Exception]) -> tuple[float, float]:
    """P[M = 1] and the hybrid bound on K (:mod:`debatekit.analysis.lipschitz`: the sum over steps
    t of max over prefixes |V(y_<t 1) - V(y_<t 0)|, V(y) = P[M = 1 | y]) by one backward induction.
    V after step t depends on the prefix only through the *live* steps, those before t + 1 that a
    later step reads (and the answer), so V is tabulated over them, one array axis a step (in
    increasing order), rather than over all 2^t prefixes. Too many live steps is ``fail``'s mistake at
    the step where they are live."""
    value, axes, k = np.array([0.0, 1.0]), [len(steps) - 1], 0.0  # after the last step, V = y_T
    for t in reversed(range(len(steps))):
        step = steps[t]
        if t in axes:
            i = axes.index(t)
            one, zero = np.take(value, 1, axis=i), np.take(value, 0, axis=i)
            del axes[i]
            k += float(np.abs(one - zero).max())
        else:
            one = zero = value
        live = sorted({*axes, *step.reads})
        if len(live) > MAX_LIVE:
            raise fail(f"{len(live)} earlier steps are still read after it (at most {MAX_LIVE})", t)
        reads = sorted(step.reads)
        p = np.array([step.probability(bits) for bits in product((0, 1), repeat=len(step.reads))])
        p = p.reshape((2,) * len(step.reads)).transpose(np.argsort(step.reads))  # axes in order of ``reads``
        p, one, zero = (_spread(a, named, live) for a, named in ((p, reads), (one, axes), (zero, axes)))
        value, axes = p * one + (1 - p) * zero, live
    return float(value), k


def _spread(array: np.ndarray, axes: list[int], live: list[int]) -> np.ndarray:
    """``array`` (one axis per step of ``axes``, increasing) shaped to broadcast over ``live``."""
    return array.reshape([2 if s in axes else 1 for s in live])
