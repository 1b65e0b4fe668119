"""Natural-language problems: a plan of steps in a TOML or JSON file (issue 11, item 2).

A plan is the machine M of the doubly-efficient debate paper's "Example for Theorem 6.2" (Section
6): a researcher's steps in words. Each step is either a **question** for the judge, reading the
earlier steps it depends on (its relevant coordinates I(t), shown to the judge as context lines),
or a **computation** over earlier steps from a closed set: ``and``, ``or``, ``not``,
``majority`` (more than half), ``at-least`` (k of them). The last step is the answer. Each
question states its ground truth ``p_yes``, the probability that the judge says yes, so the
answer's probability P[M = 1] and the Lipschitz constant K (Definition 6.1) follow exactly.

The file (TOML shown; JSON has the same keys)::

    name = "caffeine"                  # optional: the problem's name (default: the file's stem)
    title = "Does caffeine improve learning in college students?"
    source = "doubly-efficient debate paper, Section 6"     # optional
    answer = "conclusion"              # the id of the last step
    truth = "yes"                      # the answer the ground truth gives (checked)

    [[steps]]
    id = "flaw-a"
    kind = "question"                  # question, and, or, not, majority, at-least
    claim = "Study A has a clear methodological flaw"       # what its yes asserts (default: id)
    text = "Study A: ... Does this study have a clear methodological flaw?"
    p_yes = 0.0
    reads = []                         # earlier steps it depends on, by id

    [[steps]]
    id = "conclusion"
    kind = "at-least"
    k = 2                              # at-least only
    reads = ["..."]

    [variant]                          # optional: the same plan with evidence that flips it
    truth = "no"
    note = "Study C now finds no improvement."
    [variant.steps.finds-c]            # new text, p_yes or claim of some steps
    p_yes = 0.0

The transcript machine asks, at question step t, the :class:`~debatekit.oracle.Question` whose
``text`` is the step's and whose ``context`` renders y_{I(t)} one line a step, e.g. ``"Step 2
(Study A has a clear methodological flaw): no"``. **The ground-truth judge answers a question by
its text alone**: P[yes] is the step's ``p_yes`` whatever its context says (so a question's
answer is independent of the steps it reads, and question texts must be unique). A person or a
model of the judge may read the context; the ground truth does not.

Each plan becomes a problem (:func:`register_plan`; the built-in plans, package data under
``plans/``, register on import), whose size is T and whose instances are the plan (``truth`` as
stated) and its variant. Its protocols follow from the plan: cross-examination (Theorem 5.3) and
naive recursion when every ``p_yes`` is 0 or 1 (they assume a deterministic oracle), stochastic
debate (Theorem 6.2) always, with K computed below, and prover-estimator debate when the plan has
a recursive decomposition: :class:`ClaimTree` when its steps form a uniform tree of claims, else
the natural decomposition of its machine (Section 5) when it is deterministic. A claim tree is
not checked for (ε, ρ)-stability (Definition 5.3); ``debatekit.analysis.stability`` does that.

Every mistake in a file is a :class:`PlanError` naming the file and the step. It is an
:class:`~debatekit.problems.registry.InstanceError`, which the command line prints as one line
(exit status 2) when it meets one making an instance. Problem parameters (``-P``) are numbers, so
a plan file cannot be passed as one: a user's plan is registered with :func:`register_plan`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from importlib.resources.abc import Traversable
from itertools import product
from typing import Any

import numpy as np

from debatekit.files import FileMistake, parse_json, parse_toml, read_bytes, read_text
from debatekit.machine.decomposition import Decomposition, Judged, Query, natural
from debatekit.machine.transcript import MachineBuilder, TableMachine
from debatekit.oracle import FunctionOracle, Oracle, Question
from debatekit.problems.registry import PROBLEMS, Instance, InstanceError, Problem

MAX_LIVE = 20
"""The most earlier steps that may stay relevant at once (read by a later step): the exact
ground truth tabulates their 2^MAX_LIVE values."""
PLAN_KEYS = frozenset({"name", "title", "source", "answer", "truth", "steps", "variant"})
STEP_KEYS = frozenset({"id", "kind", "claim", "reads", "text", "p_yes", "k"})
VARIANT_KEYS = frozenset({"truth", "note", "steps"})
OVERRIDE_KEYS = frozenset({"text", "p_yes", "claim"})
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


class PlanError(InstanceError):
    """A mistake in a plan file; the message names the file and, where there is one, the step."""


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
    """K of Definition 6.1 in the Lean form, as the hybrid bound (:func:`_ground_truth`)."""

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
    def protocols(self) -> tuple[str, ...]:
        """The protocols whose assumptions the plan meets (module docstring)."""
        certain = self.deterministic
        decomposed = certain or ClaimTree.shape(self) is not None
        return (
            *(("cross-exam",) if certain else ()),
            "stochastic",
            *(("prover-estimator",) if decomposed else ()),
            *(("naive-recursive",) if certain else ()),
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


def _ground_truth(steps: Sequence[Step], fail: _Where) -> tuple[float, float]:
    """P[M = 1] and the hybrid bound on K (:mod:`debatekit.analysis.lipschitz`: the sum over steps
    t of max over prefixes |V(y_<t 1) - V(y_<t 0)|, V(y) = P[M = 1 | y]) by one backward induction.
    V after step t depends on the prefix only through the *live* steps, those before t + 1 that a
    later step reads (and the answer), so V is tabulated over them, one array axis a step (in
    increasing order), rather than over all 2^t prefixes."""
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


PARSERS: dict[str, Callable[[str, Traversable], Any]] = {"toml": parse_toml, "json": parse_json}
"""How a plan file's text is parsed, by its suffix (bounded in nesting: :mod:`debatekit.files`)."""


@dataclass(frozen=True)
class _Where:
    """Where a mistake is: the file, the part of it (the variant) and the steps' ids once known."""

    file: str
    part: str = ""
    ids: tuple[str, ...] = ()

    def __call__(self, message: str, step: int | None = None) -> PlanError:
        at = ""
        if step is not None:
            at = f"step {step + 1}" + (f" ({self.ids[step]!r})" if step < len(self.ids) else "") + ": "
        return PlanError(f"{self.file}: {self.part}{at}{message}")


def load(file: Traversable) -> tuple[Plan, ...]:
    """The plan in ``file`` (``.toml`` or ``.json``, a path or a package resource) and its variant
    if it states one, validated: any mistake is a :class:`PlanError` naming the file and step."""
    fail = _Where(str(file))
    stem, _, suffix = file.name.rpartition(".")
    parse = PARSERS.get(suffix)
    if parse is None or not stem:
        raise fail(f"a plan file is .toml or .json, not {file.name!r}")
    try:
        data = parse(read_text(file), file)  # at most files.MAX_BYTES, nested at most files.MAX_DEPTH
    except FileMistake as err:  # FILE:LINE: cannot read it, too large, not UTF-8, not valid, too deep
        raise PlanError(str(err)) from None
    if not isinstance(data, dict):
        raise fail("a plan is a table of keys: title, answer, truth, steps")
    _known(data, PLAN_KEYS, "a plan", fail)
    name = data.get("name", stem)
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise fail(f"name {name!r} must be lowercase letters, digits and hyphens")
    title, source, truth = _string(data, "title", fail), _string(data, "source", fail, default=""), _truth(data, fail)
    raw = data.get("steps")
    if not isinstance(raw, list) or not raw:
        raise fail("steps must be a non-empty list of steps ([[steps]] tables in TOML)")
    fail = dataclasses.replace(fail, ids=_ids(raw, fail))
    index = {ident: n for n, ident in enumerate(fail.ids)}
    reads = [_reads(step, n, index, fail) for n, step in enumerate(raw)]
    _acyclic(reads, fail)
    steps = tuple(_step(step, n, reads[n], fail) for n, step in enumerate(raw))
    _answer(data.get("answer"), fail)
    plan = Plan(name, title, str(file), source, "", truth, steps, *_checked(steps, truth, fail))
    if "variant" not in data:
        return (plan,)
    return plan, _variant(data["variant"], plan, index, dataclasses.replace(fail, part="variant: "))


def _known(table: dict, keys: frozenset[str], what: str, fail: _Where, step: int | None = None) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r}; {what} has only {', '.join(sorted(keys))}", step)


def _string(table: dict, key: str, fail: _Where, step: int | None = None, default: str | None = None) -> str:
    """``table[key]``, a non-empty string (``default`` when it is absent and there is one)."""
    if key not in table and default is not None:
        return default
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{key} must be a non-empty string, got {value!r}" if key in table else f"missing {key}", step)
    return value


def _truth(table: dict, fail: _Where) -> bool:
    value = table.get("truth")
    if value not in ("yes", "no"):
        raise fail(f"truth must be 'yes' or 'no' (the answer its ground truth gives), got {value!r}")
    return value == "yes"


def _probability(value: Any, step: int, fail: _Where) -> float:
    if value is None:
        raise fail("a question needs p_yes, the probability that the judge says yes (its ground truth)", step)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise fail(f"p_yes must be a probability in [0, 1], got {value!r}", step)
    return float(value)


def _ids(raw: list, fail: _Where) -> tuple[str, ...]:
    ids: list[str] = []
    for n, step in enumerate(raw):
        if not isinstance(step, dict):
            raise fail("is not a table of keys", n)
        ident = step.get("id")
        if not isinstance(ident, str) or not ident.strip():
            raise fail(f"needs an id, a non-empty string, got {ident!r}", n)
        if ident in ids:
            raise fail(f"repeats the id {ident!r} of step {ids.index(ident) + 1}", n)
        ids.append(ident)
    return tuple(ids)


def _reads(step: dict, n: int, index: dict[str, int], fail: _Where) -> tuple[int, ...]:
    """The step's relevant coordinates I(t), as step numbers (each a step of the plan, once)."""
    names = step.get("reads", [])
    if not isinstance(names, list) or not all(isinstance(r, str) for r in names):
        raise fail(f"reads must be a list of step ids, got {names!r}", n)
    missing = [r for r in names if r not in index]
    if missing:
        raise fail(f"reads {missing[0]!r}, which is no step of the plan", n)
    if len(set(names)) < len(names):
        raise fail("reads a step twice", n)
    return tuple(index[r] for r in names)


def _acyclic(reads: list[tuple[int, ...]], fail: _Where) -> None:
    """A cycle among the reads is a mistake, named step by step (a depth-first search)."""
    done: set[int] = set()
    for start in range(len(reads)):
        path, position = [start], [0]
        while path:
            node = path[-1]
            if position[-1] == len(reads[node]):
                done.add(path.pop())
                position.pop()
                continue
            read = reads[node][position[-1]]
            position[-1] += 1
            if read in path:
                cycle = " -> ".join(repr(fail.ids[s]) for s in [*path[path.index(read) :], read])
                raise fail(f"its reads form a cycle: {cycle}", read)
            if read not in done:
                path.append(read)
                position.append(0)


def _step(raw: dict, n: int, reads: tuple[int, ...], fail: _Where) -> Step:
    _known(raw, STEP_KEYS, "a step", fail, n)
    try:
        kind = Kind(raw.get("kind"))
    except (ValueError, TypeError):
        kinds = ", ".join(k.value for k in Kind)
        raise fail(f"unknown kind {raw.get('kind')!r}; the kinds are {kinds}", n) from None
    later = [r for r in reads if r > n]
    if later:
        raise fail(f"reads {fail.ids[later[0]]!r}, a later step (step {later[0] + 1}): read only earlier steps", n)
    ident = fail.ids[n]
    claim = _string(raw, "claim", fail, n, default=ident)
    if kind is Kind.QUESTION:
        if "k" in raw:
            raise fail("k belongs to at-least steps, not questions", n)
        return Ask(ident, claim, reads, _string(raw, "text", fail, n), _probability(raw.get("p_yes"), n, fail))
    for key in ("text", "p_yes"):
        if key in raw:
            raise fail(f"{key} belongs to questions, not {kind.value} steps", n)
    if kind is Kind.NOT and len(reads) != 1:
        raise fail(f"not reads exactly one step, got {len(reads)}", n)
    if not reads:
        raise fail(f"{kind.value} reads at least one step", n)
    k = raw.get("k", 0)
    if kind is Kind.AT_LEAST and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(reads)):
        raise fail(f"at-least needs k, a whole number from 1 to the {len(reads)} steps it reads, got {k!r}", n)
    if kind is not Kind.AT_LEAST and "k" in raw:
        raise fail(f"k belongs to at-least steps, not {kind.value} steps", n)
    return Compute(ident, claim, reads, kind, k)


def _answer(answer: Any, fail: _Where) -> None:
    """The answer is named, and it is the last step (y_T is M's output)."""
    last = fail.ids[-1]
    if answer is None:
        raise fail(f"missing answer: name the step whose value is the answer, the last one (answer = {last!r})")
    if answer not in fail.ids:
        raise fail(f"answer {answer!r} is no step of the plan")
    if answer != last:
        raise fail(f"answer {answer!r} is step {fail.ids.index(answer) + 1}, but the answer must be the last step")


def _checked(steps: tuple[Step, ...], truth: bool, fail: _Where) -> tuple[float, float]:
    """P[M = 1] and K, once the question texts are unique and P[M = 1] agrees with the stated truth
    as Theorem 6.2 promises it (above 2/3 for yes, below 1/3 for no)."""
    asked: dict[str, int] = {}
    for n, step in enumerate(steps):
        if isinstance(step, Ask):
            if step.text in asked:
                raise fail(f"asks step {asked[step.text] + 1}'s question: the ground truth is keyed on the text", n)
            asked[step.text] = n
    p, k = _ground_truth(steps, fail)
    if not (p > 2 / 3 if truth else p < 1 / 3):
        stated = "yes" if truth else "no"
        raise fail(f"states truth {stated!r}, but its ground truth gives P[answer = yes] = {p:.4g}, which is not "
                   f"{'above 2/3' if truth else 'below 1/3'} (Theorem 6.2's promise)")  # fmt: skip
    return p, k


def _variant(raw: Any, plan: Plan, index: dict[str, int], fail: _Where) -> Plan:
    """The plan with the variant's changes to some steps' text, p_yes or claim."""
    if not isinstance(raw, dict):
        raise fail("the variant is a table of keys: truth, note, steps")
    _known(raw, VARIANT_KEYS, "the variant", fail)
    truth = _truth(raw, fail)
    if truth == plan.truth:
        raise fail(f"states the plan's own truth {raw['truth']!r}; a variant states the other")
    changes = raw.get("steps", {})
    if not isinstance(changes, dict):
        raise fail("steps must be a table of changes by step id ([variant.steps.ID] in TOML)")
    steps = list(plan.steps)
    for ident, change in changes.items():
        if ident not in index:
            raise fail(f"changes {ident!r}, which is no step of the plan")
        n, step = index[ident], steps[index[ident]]
        if not isinstance(change, dict):
            raise fail("a change is a table of text, p_yes or claim", n)
        _known(change, OVERRIDE_KEYS, "a change", fail, n)
        claim = _string(change, "claim", fail, n, default=step.claim)
        if isinstance(step, Compute):
            if {"text", "p_yes"} & set(change):
                raise fail(f"text and p_yes belong to questions, not {step.op.value} steps", n)
            steps[n] = dataclasses.replace(step, claim=claim)
        else:
            text = _string(change, "text", fail, n, default=step.text)
            steps[n] = Ask(ident, claim, step.reads, text, _probability(change.get("p_yes", step.p_yes), n, fail))
    note, changed = _string(raw, "note", fail, default=""), tuple(steps)
    return Plan(plan.name, plan.title, plan.where, plan.source, note, truth, changed, *_checked(changed, truth, fail))


def plan_problem(file: Traversable) -> Problem:
    """The problem of the plan in ``file``: of size T, with the plan and its variant as its
    instances (whichever truth each states), on the protocols both meet."""
    plans = {plan.truth: plan for plan in load(file)}
    content = read_bytes(file)  # load read it whole: within the cap
    first = next(iter(plans.values()))
    protocols = tuple(p for p in first.protocols if all(p in plan.protocols for plan in plans.values()))
    size, judged = len(first.steps), sum(isinstance(s, Ask) for s in first.steps)

    def make(size: int, truth: bool, rng: np.random.Generator) -> Instance:
        if truth not in plans:
            stated = "yes" if truth else "no"
            raise PlanError(f"{first.where}: the plan has no {stated!r} instance; add a [variant] stating it")
        return dataclasses.replace(plans[truth].instance(), content=content, file=str(file))

    description = f"{first.title} (a plan of {size} steps, {judged} judged: {file.name})"
    return Problem(first.name, description, protocols, size, size, size, make)


def register_plan(file: Traversable) -> Problem:
    """Register the plan in ``file`` as a problem under its name (a PlanError if that is taken)."""
    found = plan_problem(file)
    if found.name in PROBLEMS:
        raise PlanError(f"{file}: a problem named {found.name!r} is already registered")
    PROBLEMS[found.name] = found
    return found


PLANS = resources.files(__package__) / "plans"
"""The built-in plans, package data."""
BUILTIN: tuple[str, ...] = tuple(
    register_plan(file).name
    for file in sorted(PLANS.iterdir(), key=lambda f: f.name)
    if file.name.rpartition(".")[2] in PARSERS
)
"""The names of the problems the built-in plans register."""
