"""Datasets of yes/no claims with known answers (issue 22, point 4): a CSV or JSON Lines file read
as untrusted input, and the questions of the built-in plans, as the :class:`Item` s a model of
the judge is scored on (``debatekit calibrate``).

A row has a ``question``; its ground truth as ``truth`` (yes/no, true/false or 1/0) or ``p_yes``
(the probability that the judge says yes, in [0, 1]), exactly one of them; optionally ``context``
(a passage the judge reads, shown as a context line) and ``id`` (unique; default ``row N``). Any
other column is refused, so a misspelt one is not silently dropped. Every mistake is a
:class:`DatasetError` naming the file and row (``FILE:LINE: row N: reason``), one line at exit 2.

The shipped dataset (:data:`SHIPPED`, ``datasets/claims.csv``) holds claims a careful reader can
check (geography, arithmetic, science, history), about half of them false.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from debatekit.files import FileMistake, read_jsonl, read_text
from debatekit.oracle import Question
from debatekit.problems.registry import InstanceError

COLUMNS = frozenset({"id", "question", "context", "truth", "p_yes"})
MAX_ROWS = 100_000
MAX_TEXT = 20_000
"""The most characters of a question or a context."""
MAX_ID = 200
TRUTHS = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0, "1": 1.0, "0": 0.0}

SHIPPED_NAME = "claims"
SHIPPED = resources.files(__package__) / "datasets" / "claims.csv"
"""The small dataset the package ships, named ``claims`` where a dataset file is asked for."""


class DatasetError(InstanceError):
    """A dataset file that cannot be used: the file, the row and why."""


@dataclass(frozen=True)
class Item:
    """One claim: its ``question`` for the judge, with ``context`` lines, and the ground truth ``p_yes``."""

    id: str
    question: str
    context: tuple[str, ...]
    p_yes: float

    def query(self) -> Question:
        """What the judge is asked."""
        return Question(self.question, self.context)


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


def _item(raw: dict[str, Any], n: int, where: str) -> Item:
    unknown = sorted(set(raw) - COLUMNS)
    if unknown:
        raise DatasetError(f"{where}: unknown column {unknown[0]!r}; the columns are {', '.join(sorted(COLUMNS))}")
    question = _text(raw.get("question"), "question", where)
    if not question:
        raise DatasetError(f"{where}: a row needs a question")
    context = _text(raw.get("context"), "context", where)
    ident = raw.get("id", f"row {n}")
    if not isinstance(ident, str | int) or isinstance(ident, bool) or not 0 < len(str(ident)) <= MAX_ID:
        raise DatasetError(f"{where}: an id is text of 1 to {MAX_ID} characters, not {ident!r}")
    return Item(str(ident), question, (context,) if context else (), _truth(raw, where))


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
