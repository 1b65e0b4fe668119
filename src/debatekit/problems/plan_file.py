"""Reading a plan file (TOML or JSON, through :mod:`debatekit.files`) into the plans of
:mod:`debatekit.problems.plan`, one :class:`PlanError` per mistake, and registering each plan as a
problem.

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

Each plan becomes a problem (:func:`register_plan`; the built-in plans, package data under
``plans/``, register on import), whose size is T and whose instances are the plan (``truth`` as
stated) and its variant, with the features both carry (:attr:`~debatekit.problems.plan.Plan.features`).

Every mistake in a file is a :class:`PlanError` naming the file and the step. It is an
:class:`~debatekit.problems.registry.InstanceError`, which the command line prints as one line
(exit status 2) when it meets one making an instance. Problem parameters (``-P``) are numbers, so
a plan file cannot be passed as one: a user's plan is registered with :func:`register_plan`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import numpy as np

from debatekit.files import FileMistake, parse_json, parse_toml, read_bytes, read_text
from debatekit.problems.plan import Ask, Compute, Kind, Plan, Step, ground_truth
from debatekit.problems.registry import PROBLEMS, Instance, InstanceError, Problem

PLAN_KEYS = frozenset({"name", "title", "source", "answer", "truth", "steps", "variant"})
STEP_KEYS = frozenset({"id", "kind", "claim", "reads", "text", "p_yes", "k"})
VARIANT_KEYS = frozenset({"truth", "note", "steps"})
OVERRIDE_KEYS = frozenset({"text", "p_yes", "claim"})
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


class PlanError(InstanceError):
    """A mistake in a plan file; the message names the file and, where there is one, the step."""


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
    p, k = ground_truth(steps, fail)
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
    instances (whichever truth each states; the plan's own is the default), with the features both carry."""
    plans = {plan.truth: plan for plan in load(file)}
    content = read_bytes(file)  # load read it whole: within the cap
    first = next(iter(plans.values()))
    features = frozenset.intersection(*(plan.features for plan in plans.values()))
    size, judged = len(first.steps), sum(isinstance(s, Ask) for s in first.steps)

    def make(size: int, truth: bool, rng: np.random.Generator) -> Instance:
        if truth not in plans:
            stated = "yes" if truth else "no"
            raise PlanError(f"{first.where}: the plan has no {stated!r} instance; add a [variant] stating it")
        return dataclasses.replace(plans[truth].instance(), content=content, file=str(file))

    description = f"{first.title} (a plan of {size} steps, {judged} judged: {file.name})"
    return Problem(first.name, description, features, size, size, size, make, truths=tuple(plans))


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
