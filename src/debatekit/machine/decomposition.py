"""Recursive decompositions (Definition 5.1 of the prover-estimator debate paper).

A depth-d, width-q decomposition of one input x is a machine M_D(x, y, z): a *query* ŷ of level
k ≥ 1 (a claim) splits into q queries y = (y_1..y_q) of level k-1, and M_D computes ŷ's answer
from their answers z = (z_1..z_q). The root ŷ^d asks "L(x) = 1?"; a level-0 query names a set S
of coordinates of an implicit proof u, and its answer is the human-judgement oracle on them,
O(u_S). The correct answers g (Definition 5.2's "correct query answer") are those of the proof
the decomposition is built on.

The verifier only ever meets queries a prover sent, so :meth:`Decomposition.valid_split` must
accept exactly the splits M_D is defined on and never raise on garbage.

:func:`natural` is the paper's natural decomposition of a transcript machine ("2^k steps are
correct" is the AND of two claims about 2^(k-1) steps), in a width-q form; users subclass
:class:`Decomposition` for their own.
"""

from __future__ import annotations

import inspect
import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.oracle import Asking, KnownOracle, Oracle

Query = Hashable


def check_stability_parameters(epsilon: float, rho: float) -> None:
    """Definition 5.3 takes 0 < ε < 1/2 and 0 < ρ < 1 (ValueError otherwise, NaN included)."""
    if not 0 < epsilon < 0.5:
        raise ValueError(f"epsilon must satisfy 0 < epsilon < 1/2 (Definition 5.3), got {epsilon}")
    if not 0 < rho < 1:
        raise ValueError(f"rho must satisfy 0 < rho < 1 (Definition 5.3), got {rho}")


@dataclass(frozen=True)
class Automaton:
    """M_D(x, y, ·) read left to right: ``step(state, i, z_i)`` after each answer, ``output(state)``
    at the end. The conditional probabilities of the answers must depend on z_<i only through
    the state (as they do when the subclaims are independent)."""

    start: Hashable
    step: Callable[[Hashable, int, int], Hashable]
    output: Callable[[Hashable], int]


@dataclass(frozen=True)
class CountStatistic:
    """The statistic M_D reads: ``groups`` partition the q answers (coordinate indices from 0),
    and M_D(x, y, z) depends on z only through the number of ones in each group (Appendix C's
    majorities; :mod:`debatekit.players.count_estimator` represents B over these counts). The
    subclaims of a split must be independent (their correct answers a product, as
    :meth:`Decomposition.conditional` assumes by default)."""

    groups: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Judged:
    """A leaf that puts one question to the human-judgement oracle: the query asked, and the leaf's
    answer when the judge says yes and when no."""

    question: Query
    if_yes: int
    if_no: int


class Decomposition(ABC):
    """M_D for one input x (Definition 5.1): depth d, width q, an implicit proof of length m."""

    depth: int
    width: int
    leaf_bound: int = 0
    """The most proof bits a leaf names (max |S|), for the bound on bits the verifier reads."""
    statistic: CountStatistic | None = None
    """The per-group counts M_D reads on every split, when it reads only those (None: unknown)."""

    @abstractmethod
    def root(self) -> Query:
        """ŷ^d: the claim L(x) = 1."""

    @abstractmethod
    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        """The q queries of level ``level`` - 1 that a level-``level`` query decomposes into (what an
        honest prover sends)."""

    def valid_split(self, query: Query, level: int, subqueries: object) -> bool:
        """Whether a prover's ``subqueries`` are a split M_D is defined on; the default accepts
        exactly :meth:`split`. Must not raise on any input."""
        try:
            return isinstance(subqueries, tuple) and subqueries == self.split(query, level)
        except Exception:
            return False

    @abstractmethod
    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        """M_D(x, y, z): the answer to ``query`` given answers ``z`` to its split."""

    @abstractmethod
    def leaf(self, query: Query) -> tuple[int, ...]:
        """S ⊆ [m]: the proof coordinates a level-0 query names."""

    @abstractmethod
    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        """P[O(ũ_S) = 1] for a level-0 query, given the proof bits ũ_S (0/1, in the order of
        :meth:`leaf`)."""

    def judge_leaves(self, queries: Sequence[Query], read: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """:meth:`judge` at each level-0 query, the proof bits of all of them read at once:
        ``read(positions)`` gives ũ at an int64 array of positions (the leaves' :meth:`leaf`,
        concatenated). A decomposition may vectorise it."""
        named = [self.leaf(y) for y in queries]
        bits = read(np.fromiter(itertools.chain.from_iterable(named), dtype=np.int64)).tolist()
        ends = itertools.accumulate(len(leaf) for leaf in named)
        judged = [self.judge(y, tuple(bits[e - len(s) : e])) for y, s, e in zip(queries, named, ends, strict=True)]
        return np.array(judged, dtype=float)

    def judged(self, query: Query, bits: tuple[int, ...]) -> Judged | None:
        """The question a level-0 query puts to the human-judgement oracle, or None where the
        verifier computes its answer itself (:meth:`judge` then gives it): what a run asks its own
        judge (people, a model) in place of the problem's simulated one."""
        return None

    @abstractmethod
    def proof(self, j: int) -> int:
        """u_j of the implicit proof the decomposition is built on (A(x, j) in Definition 5.2)."""

    def proof_array(self, positions: np.ndarray) -> np.ndarray:
        """u at each of ``positions`` (an int64 array) as a uint8 array: :meth:`proof` at each, which
        a decomposition may vectorise."""
        return np.fromiter((self.proof(int(j)) for j in positions), dtype=np.uint8, count=len(positions))

    @abstractmethod
    def truth(self, query: Query, level: int) -> float:
        """g(x, query): the probability that the correct answer is 1 (0 or 1 when deterministic)."""

    def bounded_truth(self, query: Query, level: int) -> float | None:
        """The correct answer as a prover within the problem's computation budget finds it, or
        None when that is out of reach (the obfuscated arguments of Section 7). By default every
        answer is in reach: the computation debated is efficient."""
        return self.truth(query, level)

    def conditional(self, query: Query, level: int, i: int, prefix: tuple[int, ...]) -> float:
        """P[z_i = 1 | z_<i = prefix] for the split of ``query`` under the correct answers; by
        default the subclaims are independent, so this is the truth of subquery i."""
        return self.truth(self.split(query, level)[i], level - 1)

    def automaton(self, query: Query, level: int) -> Automaton | None:
        """M_D on the split of ``query`` as a streaming automaton over z_1..z_q, when it has a small
        one; stability analysis uses it beyond q = 12 (:mod:`debatekit.analysis.stability`)."""
        return None

    def answer_distribution(self, query: Query, level: int) -> np.ndarray:
        """The correct joint distribution of z over {0,1}^q (index: z_1 is the most significant
        bit), from :meth:`conditional`: the g_k of Lemma A.4."""
        q = self.width
        probs = np.ones(1)
        for i in range(q):
            prefixes = [tuple(int(b) for b in np.binary_repr(p, i)) if i else () for p in range(2**i)]
            p1 = np.array([self.conditional(query, level, i, prefix) for prefix in prefixes])
            probs = np.stack([probs * (1 - p1), probs * p1], axis=1).reshape(-1)
        return probs


def exact_split(decomposition: Decomposition, query: Query, level: int, subqueries: object) -> bool:
    """A :meth:`Decomposition.valid_split` stricter than the default: exactly :meth:`~Decomposition.split`,
    q queries made of ints (so that 2.0 or True never pass for 2 or 1 in a prover's split); never raises."""
    try:
        return (
            isinstance(subqueries, tuple)
            and len(subqueries) == decomposition.width
            and _int_tree(subqueries)
            and subqueries == decomposition.split(query, level)
        )
    except Exception:
        return False


def _int_tree(obj: object) -> bool:
    """Whether ``obj`` is an int (not a bool) or a tuple of such trees."""
    if isinstance(obj, tuple):
        return all(_int_tree(item) for item in obj)
    return isinstance(obj, int | np.integer) and not isinstance(obj, bool | np.bool_)


class NaturalDecomposition(Decomposition):
    """The natural decomposition of a deterministic transcript machine M on input x (Section 5).

    A level-k query is a block (a, a + q^k) of step numbers, claiming "every step t in the block
    with t < T writes the bit its rule gives on the proof's y_{I(t)}, and if the block holds the
    last step, that bit is 1". The root is (0, q^d) with d = ⌈log_q T⌉ (steps at T and beyond are
    padding, trivially correct); a block splits into its q equal sub-blocks and M_D is their AND.
    The implicit proof u is (x, y_1..y_T) in the machine's addresses; a leaf (t, t+1) names
    S = I(t) ∪ {address of y_t}, and the oracle checks that one step: a compute step exactly, an
    oracle step by asking O on the query built from ũ_{I(t)} (one human judgement), which must be
    deterministic so that the correct answers are bits. The verifier knows x, so a leaf whose
    proof bits copy x wrongly is false (else a proof on another x would make M_D say 1 when
    L(x) = 0; issue 22).
    """

    def __init__(self, machine: TranscriptMachine, x: np.ndarray, oracle: Oracle, width: int = 2):
        if width < 2:
            raise ValueError("a decomposition needs width q >= 2")
        if machine.n_witness:
            raise ValueError("the natural decomposition takes machines without a witness")
        if not machine.deterministic:
            raise ValueError("the natural decomposition needs a machine without coin steps")
        self.machine, self.oracle, self.width = machine, oracle, width
        self.x = np.asarray(x, dtype=np.uint8)
        self.depth = max(1, math.ceil(math.log(machine.length, width) - 1e-12))
        self.leaf_bound = machine.max_relevant + 1

    def _known_answer(self, query: Hashable) -> int:
        p = self.oracle.probability(query)
        if p not in (0.0, 1.0):
            raise ValueError("the natural decomposition needs a deterministic oracle (P[O(z)=1] in {0, 1})")
        return int(p)

    @cached_property
    def _transcript(self) -> np.ndarray:
        return self.machine.run(self.x, self._known_answer, np.random.default_rng(0))

    @property
    def proof_length(self) -> int:
        return self.machine.offset + self.machine.length

    def root(self) -> Query:
        return (0, self.width**self.depth)

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        a, _ = query  # type: ignore[misc]
        span = self.width ** (level - 1)
        return tuple((a + i * span, a + (i + 1) * span) for i in range(self.width))

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        return int(all(answers))

    def automaton(self, query: Query, level: int) -> Automaton:
        return Automaton(1, lambda state, i, z: state & z, lambda state: state)

    def leaf(self, query: Query) -> tuple[int, ...]:
        t = query[0]  # type: ignore[index]
        if t >= self.machine.length:
            return ()
        return (*self.machine.relevant(t), self.machine.offset + t)

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        t = query[0]  # type: ignore[index]
        if t >= self.machine.length:
            return 1.0
        *inputs, written = bits
        if not self._copies_x(t, inputs):
            return 0.0
        rule = self.machine.rule(t, tuple(inputs))
        kind = self.machine.kind(t)
        expected = int(rule) if kind is StepKind.COMPUTE else self._known_answer(rule)  # type: ignore[arg-type]
        last = t == self.machine.length - 1
        return float(written == expected and (written == 1 or not last))

    def _copies_x(self, t: int, inputs: list[int]) -> bool:
        """Whether the proof bits step t reads at x's addresses are x's."""
        offset = self.machine.offset
        return all(bit == self.x[a] for a, bit in zip(self.machine.relevant(t), inputs, strict=True) if a < offset)

    def judged(self, query: Query, bits: tuple[int, ...]) -> Judged | None:
        t = query[0]  # type: ignore[index]
        if t >= self.machine.length or self.machine.kind(t) is StepKind.COMPUTE:
            return None
        *inputs, written = bits
        passes = int(self._copies_x(t, inputs) and (written == 1 or t != self.machine.length - 1))
        return Judged(self.machine.rule(t, tuple(inputs)), passes * int(written == 1), passes * int(written == 0))

    def proof(self, j: int) -> int:
        offset = self.machine.offset
        return int(self.x[j]) if j < offset else int(self._transcript[j - offset])

    def truth(self, query: Query, level: int) -> float:
        a, b = query  # type: ignore[misc]
        holds_last = a <= self.machine.length - 1 < b
        return float(self._transcript[-1]) if holds_last else 1.0


def natural(machine: TranscriptMachine, x: Sequence[int] | np.ndarray, oracle: Oracle, width: int = 2) -> Decomposition:
    """The width-q natural decomposition of M on x (q = 2 is the paper's)."""
    return NaturalDecomposition(machine, np.asarray(x), oracle, width)


class Leaves(Oracle):
    """The verifier's oracle at a decomposition's leaves in a run whose judge is ``judge`` (the
    instance's oracle: the problem's own, people, a model, or its sample-only view): a leaf that
    asks a human judgement (:meth:`Decomposition.judged`) asks ``judge`` that question, and is
    answered as the decomposition maps the judge's yes or no; a leaf the verifier computes is
    answered by :meth:`Decomposition.judge`. So a judge swapped in for a run is the one asked."""

    def __init__(self, decomposition: Decomposition, judge: Oracle):
        self.decomposition, self.judge = decomposition, judge

    @property
    def waits(self) -> bool:  # type: ignore[override]
        return self.judge.waits

    @property
    def deterministic(self) -> bool | None:
        return self.judge.deterministic

    def probability(self, query: Query) -> float | None:
        leaf, bits = query  # type: ignore[misc]
        asked = self.decomposition.judged(leaf, tuple(bits))
        if asked is None:
            return float(self.decomposition.judge(leaf, tuple(bits)))
        p = self.judge.probability(asked.question)
        return None if p is None else p * asked.if_yes + (1 - p) * asked.if_no

    def sample(self, query: Query, rng: np.random.Generator) -> Any:
        return self.sample_count(query, 1, rng)

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> Any:
        leaf, bits = query  # type: ignore[misc]
        asked = self.decomposition.judged(leaf, tuple(bits))
        if asked is None:
            return int(rng.binomial(r, float(self.decomposition.judge(leaf, tuple(bits)))))
        yes = self.judge.sample_count(asked.question, r, rng)
        if inspect.isawaitable(yes):
            return _mapped(yes, asked, r)
        return asked.if_yes * int(yes) + asked.if_no * (r - int(yes))

    def judgements(self, where: Asking) -> list[dict[str, Any]]:
        return self.judge.judgements(where)


async def _mapped(yes: Awaitable[int], asked: Judged, r: int) -> int:
    count = int(await yes)
    return asked.if_yes * count + asked.if_no * (r - count)


class LeafOracle(KnownOracle):
    """The human-judgement oracle of a decomposition's leaves: the query ``(leaf query, bits)``
    is answered 1 with probability ``judge(leaf query, bits)``. Provers that spot-check leaves
    ask it through their counted :class:`~debatekit.oracle.Asker`."""

    def __init__(self, decomposition: Decomposition):
        self.decomposition = decomposition

    def probability(self, query: Query) -> float:
        leaf, bits = query  # type: ignore[misc]
        return float(self.decomposition.judge(leaf, tuple(bits)))
