"""Datasets of yes/no claims with known answers (issue 22, point 4): a CSV or JSON Lines file read
as untrusted input into :class:`Item` s, which a model of the judge is scored on (``debatekit
calibrate``) and which every protocol plays, item by item, each as a plan with its own truth
(``--problem FILE.csv|jsonl``, :mod:`debatekit.runs.dataset`); and the questions of the built-in plans.

A row has a ``question``; its ground truth as ``truth`` (yes/no, true/false or 1/0) or ``p_yes``
(the probability that the judge says yes, in [0, 1]), exactly one of them; optionally a
``passage`` (or ``context``: a text the judge reads with every question of the row), an ``id``
(unique; default ``row N``) and a decomposition: ``steps``, a list (in a CSV cell, as JSON text)
of sub-claims ``{"id", "question", "truth" | "p_yes"}``, and ``combine``, how they give the
answer: ``and`` (the default), ``or``, ``majority`` or ``at-least:K``. The decomposition must
give the row's truth (its P[yes] more than 1/2 exactly when the truth is yes; a row's ``p_yes``
with steps is the one they give). Any other column is refused, so a misspelt one is not silently
dropped. Every mistake is a :class:`DatasetError` naming the file and row (``FILE:LINE: row N:
reason``), one line at exit 2.

As a plan (:meth:`Item.plan`, the doubly-efficient debate paper's Section 6 example): a row
without steps is one judged step, the question with the passage before it; a row with steps is
each sub-claim a judged step (the passage before it), and one computation over them, the answer.
So a decomposed row is a one-level claim tree (prover-estimator debate's decomposition), and
cross-examination and naive recursion play rows whose ground truths are certain.

The shipped datasets (:data:`SHIPPED`, by name where a dataset is asked for): ``claims``
(``datasets/claims.csv``, 40 checkable claims, half false) and ``compound``
(``datasets/compound.jsonl``, compound claims with their decompositions, some about a passage).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from debatekit.files import FileMistake, read_jsonl, read_text
from debatekit.oracle import Question
from debatekit.problems.plan import Ask, Compute, Kind, Plan, Step, ground_truth
from debatekit.problems.registry import Instance, InstanceError, Problem

COLUMNS = frozenset({"id", "question", "context", "passage", "truth", "p_yes", "steps", "combine"})
STEP_KEYS = frozenset({"id", "question", "truth", "p_yes"})
MAX_ROWS = 100_000
MAX_TEXT = 20_000
"""The most characters of a question or a passage."""
MAX_ID = 200
MAX_STEPS = 16
"""The most sub-claims of a row (a plan's computation reads at most ``plan.MAX_LIVE`` steps)."""
TRUTHS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0}
COMBINES = {kind.value: kind for kind in (Kind.AND, Kind.OR, Kind.MAJORITY, Kind.AT_LEAST)}
ITEM = "#"
"""What separates a dataset from one of its items' ids in a problem's name: ``FILE.csv#ID``."""

_DATA = resources.files(__package__) / "datasets"
SHIPPED: dict[str, Traversable] = {"claims": _DATA / "claims.csv", "compound": _DATA / "compound.jsonl"}
"""The datasets the package ships, by the name that stands for each where a dataset file is asked for."""


class DatasetError(InstanceError):
    """A dataset file that cannot be used: the file, the row and why."""


@dataclass(frozen=True)
class Item:
    """One claim: its ``question`` for the judge, with ``context`` lines (its passage), the ground
    truth ``p_yes``, and, for a decomposed claim, its plan's ``steps`` (sub-claims, then the answer)."""

    id: str
    question: str
    context: tuple[str, ...]
    p_yes: float
    steps: tuple[Step, ...] = ()
    lipschitz: float = 0.0
    """A decomposed claim's bound on K (:func:`~debatekit.problems.plan.ground_truth`, computed with
    ``p_yes`` when the row was read: for its plan, not again)."""

    def query(self) -> Question:
        """What the judge is asked."""
        return Question(self.question, self.context)

    @property
    def truth(self) -> bool | None:
        """The answer a debate about the claim is about: P[yes] above or below 1/2 (None at 1/2)."""
        return None if self.p_yes == 0.5 else self.p_yes > 0.5

    def plan(self, name: str, where: str) -> Plan:
        """The row as a plan named ``name`` (module docstring); a row without a truth (P[yes] 1/2)
        is a :class:`DatasetError`."""
        if self.truth is None:
            raise DatasetError(f"{where}: item {self.id!r}: P[yes] 1/2 is no truth to debate")
        if self.steps:
            steps, (probability, lipschitz) = self.steps, (self.p_yes, self.lipschitz)
        else:
            steps = (Ask("claim", self.question, (), _read(self.context, self.question), self.p_yes),)
            probability, lipschitz = ground_truth(steps, lambda why, t: DatasetError(f"{where}: step {t + 1}: {why}"))
        return Plan(name, self.question, where, "", "", self.truth, steps, probability, lipschitz)

    def problem(self, name: str, where: str) -> Problem:
        """The row as a problem named ``name`` (``DATASET#ID``), of size T, whose one instance is its
        plan with the row's truth (the default ``--truth``), bound in records to the row's content."""
        plan = self.plan(name, where)
        content = json.dumps(_content(self), sort_keys=True).encode()

        def make(size: int, truth: bool, rng: np.random.Generator) -> Instance:
            if truth != plan.truth:
                raise InstanceError(f"{name}: the item's truth is {'yes' if plan.truth else 'no'}, not the other")
            return dataclasses.replace(plan.instance(), content=content, file=where)

        size = len(plan.steps)
        description = f"{self.question} (item {self.id} of a dataset: {size} steps)"
        return Problem(name, description, plan.features, size, size, size, make, truths=(plan.truth,))


def _read(context: tuple[str, ...], question: str) -> str:
    """A judged step's text: the row's passage, then the question."""
    return "\n".join((*context, question))


def _content(item: Item) -> dict[str, Any]:
    """What fixes a row's plan, as JSON data: the record's fingerprint hashes it."""
    steps = [
        {"id": s.id, "text": s.text, "p_yes": s.p_yes} if isinstance(s, Ask) else {"op": s.op.value, "k": s.k}
        for s in item.steps
    ]
    return {"id": item.id, "question": item.question, "context": list(item.context), "p_yes": item.p_yes,
            "steps": steps}  # fmt: skip


def source(name: str) -> Traversable:
    """A dataset by name: a shipped one (:data:`SHIPPED`), else the file at that path."""
    return SHIPPED.get(name) or Path(name)


def is_dataset(name: str) -> bool:
    """Whether a problem's name names a whole dataset: a shipped one, or a ``.csv`` or ``.jsonl`` file."""
    return name in SHIPPED or name.lower().endswith((".csv", ".jsonl"))


def item_of(name: str) -> tuple[str, str] | None:
    """(dataset, id) when a problem's name names one item of a dataset, ``DATASET#ID``; else None."""
    dataset, separator, ident = name.partition(ITEM)
    return (dataset, ident) if separator and ident and is_dataset(dataset) else None


def item_problem(name: str) -> Problem:
    """The problem of the item ``DATASET#ID`` names (a :class:`DatasetError` if there is none)."""
    found = item_of(name)
    if found is None:
        raise DatasetError(f"{name!r} names no item of a dataset (DATASET#ID)")
    dataset, ident = found
    items = _indexed(dataset, _stamp(dataset))
    if ident not in items:
        raise DatasetError(f"{dataset}: no item with the id {ident!r}")
    return items[ident].problem(name, f"{dataset}{ITEM}{ident}")


def named(name: str) -> tuple[Item, ...]:
    """The items of the dataset ``name`` (:func:`source`), read once while its file is unchanged."""
    return tuple(_indexed(name, _stamp(name)).values())


def _stamp(name: str) -> tuple[int, int] | None:
    """What tells a dataset file's versions apart (its modification time and size; None: shipped)."""
    file = source(name)
    if not isinstance(file, Path):
        return None
    try:
        stat = file.stat()
    except OSError as err:
        raise DatasetError(f"{name}: cannot read it: {err.strerror or err}") from None
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _indexed(name: str, stamp: tuple[int, int] | None) -> dict[str, Item]:
    """The dataset's items by id, in the file's order (an item looked up once per run, not searched for)."""
    return {item.id: item for item in load(source(name))}


def load(file: Traversable) -> tuple[Item, ...]:
    """The items of the dataset ``file`` (``.csv`` or ``.jsonl``), checked row by row."""
    suffix = file.name.rpartition(".")[2].lower()
    try:
        if suffix == "csv":
            rows = _csv_rows(file)
        elif suffix == "jsonl":
            rows = read_jsonl(file)
        else:
            raise DatasetError(f"{file}: a dataset is .csv or .jsonl, not {file.name!r}")
        items, ids = [], set()
        for n, (line, raw) in enumerate(rows, 1):
            if n > MAX_ROWS:
                raise DatasetError(f"{file}:{line}: more than {MAX_ROWS} rows")
            item = _item(raw, n, f"{file}:{line}: row {n}")
            if item.id in ids:
                raise DatasetError(f"{file}:{line}: row {n}: the id {item.id!r} is taken by an earlier row")
            ids.add(item.id)
            items.append(item)
    except FileMistake as err:
        raise DatasetError(str(err)) from None
    if not items:
        raise DatasetError(f"{file}: no rows")
    return tuple(items)


def _csv_rows(file: Traversable) -> Iterable[tuple[int, dict[str, Any]]]:
    """Each CSV row after the header as (line, its cells by column), ragged rows refused."""
    reader = csv.reader(io.StringIO(read_text(file).removeprefix("\ufeff"), newline=""))  # a spreadsheet's BOM
    try:
        header = next(reader, None)
        if header is None:
            return
        names = [name.strip() for name in header]
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(names):
                raise DatasetError(f"{file}:{reader.line_num}: {len(cells)} cells where the header has {len(names)}")
            yield reader.line_num, {name: cell for name, cell in zip(names, cells, strict=True) if cell != ""}
    except csv.Error as err:
        raise DatasetError(f"{file}:{reader.line_num}: not CSV: {err}") from None


def _question(raw: dict[str, Any], known: frozenset[str], where: str, what: str) -> str:
    """A row's or a step's question, once its keys are known ones (``what`` names them: a
    misspelt one is refused, never dropped)."""
    unknown = sorted(set(raw) - known)
    if unknown:
        raise DatasetError(f"{where}: unknown {what} {unknown[0]!r}; the {what}s are {', '.join(sorted(known))}")
    question = _text(raw.get("question"), "question", where)
    if not question:
        raise DatasetError(f"{where}: a question is needed")
    return question


def _item(raw: dict[str, Any], n: int, where: str) -> Item:
    question = _question(raw, COLUMNS, where, "column")
    if "context" in raw and "passage" in raw:
        raise DatasetError(f"{where}: give the passage as passage or context, one of them")
    passage = _text(raw.get("passage", raw.get("context")), "passage", where)
    ident = _ident(raw.get("id", f"row {n}"), where)
    context = (passage,) if passage else ()
    p_yes = _truth(raw, where)
    if "steps" not in raw:
        if "combine" in raw:
            raise DatasetError(f"{where}: combine says how steps give the answer; the row has no steps")
        return Item(ident, question, context, p_yes)
    steps = _steps(raw["steps"], raw.get("combine", Kind.AND.value), context, question, where)
    given, lipschitz = ground_truth(steps, lambda why, t: DatasetError(f"{where}: step {t + 1}: {why}"))
    stated = "truth" if "truth" in raw else "p_yes"
    agrees = math.isclose(given, p_yes, abs_tol=1e-9) if stated == "p_yes" else given != 0.5 and (given > 0.5) == p_yes
    if not agrees:
        raise DatasetError(f"{where}: its steps give P[yes] = {given:g}, which is not its {stated} {raw[stated]}")
    return Item(ident, question, context, given, steps, lipschitz)


def _ident(value: Any, where: str) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool) or not 0 < len(str(value)) <= MAX_ID:
        raise DatasetError(f"{where}: an id is text of 1 to {MAX_ID} characters, not {value!r}")
    if ITEM in str(value):
        raise DatasetError(f"{where}: an id cannot hold {ITEM!r} (it separates a dataset from an id), got {value!r}")
    return str(value)


def _steps(value: Any, combine: Any, context: tuple[str, ...], question: str, where: str) -> tuple[Step, ...]:
    """A row's decomposition as a plan's steps: its sub-claims, judged with the passage, then the answer."""
    if isinstance(value, str):  # a CSV cell
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError) as err:
            raise DatasetError(f"{where}: steps is a JSON list of sub-claims, not {value[:60]!r} ({err})") from None
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_STEPS:
        raise DatasetError(f"{where}: steps is a list of 1 to {MAX_STEPS} sub-claims")
    steps: list[Step] = []
    for k, raw in enumerate(value, 1):
        at = f"{where}: step {k}"
        if not isinstance(raw, dict):
            raise DatasetError(f"{at}: a sub-claim is an object with a question and its truth")
        text = _question(raw, STEP_KEYS, at, "key")
        ident = _ident(raw.get("id", f"step {k}"), at)
        if any(s.claim == text or s.id == ident for s in steps):
            raise DatasetError(f"{at}: its question or id repeats an earlier step's")
        steps.append(Ask(ident, text, (), _read(context, text), _truth(raw, at)))
    op, k = _combine(combine, len(steps), where)
    return (*steps, Compute("answer", question, tuple(range(len(steps))), op, k))


def _combine(value: Any, n: int, where: str) -> tuple[Kind, int]:
    """``combine``: and, or, majority, or at-least:K with 1 <= K <= n."""
    text = value.strip().lower() if isinstance(value, str) else ""
    name, _, count = text.partition(":")
    if name not in COMBINES or (count != "") != (COMBINES[name] is Kind.AT_LEAST):
        raise DatasetError(f"{where}: combine is and, or, majority or at-least:K, not {value!r}")
    k = int(count) if count.isdigit() else 0
    if COMBINES[name] is Kind.AT_LEAST and not 1 <= k <= n:
        raise DatasetError(f"{where}: at-least:K needs K from 1 to the {n} steps, not {count!r}")
    return COMBINES[name], k


def _text(value: Any, column: str, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DatasetError(f"{where}: {column} is text, not {value!r}")
    if len(value) > MAX_TEXT:
        raise DatasetError(f"{where}: {column} longer than {MAX_TEXT} characters")
    return value.strip()


def _truth(raw: dict[str, Any], where: str) -> float:
    """The row's P[yes]: from ``truth`` or ``p_yes``, exactly one given."""
    if ("truth" in raw) == ("p_yes" in raw):
        raise DatasetError(f"{where}: give the ground truth as truth (yes/no) or p_yes (a probability), one of them")
    if "truth" in raw:
        value = raw["truth"]
        key = str(int(value)) if type(value) in (bool, int) else value.strip().lower() if isinstance(value, str) else ""
        if key not in TRUTHS:
            raise DatasetError(f"{where}: truth is yes or no (or true/false, 1/0), not {value!r}")
        return TRUTHS[key]
    value = raw["p_yes"]
    try:
        p = float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else math.nan
    except ValueError:
        p = math.nan
    if not 0.0 <= p <= 1.0:
        raise DatasetError(f"{where}: p_yes is a probability in [0, 1], not {value!r}")
    return p


def plan_items() -> tuple[Item, ...]:
    """Every question of the built-in plans and their variants, once each by text (the ground
    truth answers a question by its text alone), asked with no context, as ``PLAN:STEP`` ids
    (``PLAN/variant:STEP`` for a question only the variant asks)."""
    from debatekit.problems.plan import Ask
    from debatekit.problems.plan_file import PARSERS, PLANS
    from debatekit.problems.plan_file import load as load_plan

    seen: dict[str, Item] = {}
    for file in sorted(PLANS.iterdir(), key=lambda f: f.name):
        if file.name.rpartition(".")[2] not in PARSERS:
            continue
        for k, plan in enumerate(load_plan(file)):
            name = plan.name + ("/variant" if k else "")
            for step in plan.steps:
                if isinstance(step, Ask) and step.text not in seen:
                    seen[step.text] = Item(f"{name}:{step.id}", step.text, (), step.p_yes)
    return tuple(seen.values())
