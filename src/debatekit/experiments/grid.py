"""Sweep grids: a TOML file of axes, expanded into cells, each a :class:`~debatekit.runs.spec.RunSpec`.

The file's top level gives axes (a value or a list of values each), and optionally ``[[grid]]``
tables, each a grid of its own over the top level's axes with its own axes replacing them (a
``[params]`` table merges by name); the cells are the union of every grid's product::

    trials = 50
    seed = [0, 1]
    problem = "parity"
    size = [16, 32]
    truth = ["yes", "no"]

    [[grid]]
    protocol = "cross-exam"
    bob = ["honest", "point-random"]

    [[grid]]
    protocol = "prover-estimator"
    problem = "obfuscated-primality"
    size = 8
    [grid.params]            # as -P NAME=VALUE: one value or a list
    q = [2, 4]

Axes: ``protocol``, ``problem`` (a dataset, ``.csv``, ``.jsonl`` or a shipped one's name, is a
cell an item the protocol can play, as ``run`` plays it: :mod:`debatekit.runs.dataset`, with no
``size`` or ``truth`` axis), ``size`` (default: the problem's), ``truth`` (yes / no; default:
the problem's, a plan's own answer; a truth the problem cannot have is refused before any cell
runs), ``alice``, ``bob`` (default honest), ``constants`` (stochastic debate only), ``seed``
(default 0), ``params``; how debates are judged and generated (:data:`SETTINGS`): ``oracle``,
``prover_oracle``, ``verifier_oracle`` (builtin, sample or llm:PROVIDER/MODEL), ``generation`` (a
``--generation`` TOML file, read as the grid is) and ``prompts`` (a directory); ``trials``
(default 200) is one number. A cell's id (:attr:`RunSpec.id`)
is a short hash of its canonical parameters, so it does not depend on the order of the file or of the axes. The
file is read within :mod:`debatekit.files`' bounds, and a grid of more than :data:`MAX_CELLS`
cells (counted as the product of its axes' lengths, before any is made) is refused.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

from debatekit.files import FileMistake, read_toml
from debatekit.mistakes import UserError
from debatekit.protocols.stochastic.params import Constants
from debatekit.runs.spec import RunSpec, Truth

AXES = ("protocol", "problem", "size", "truth", "alice", "bob", "constants", "seed")
DEFAULTS: dict[str, list[Any]] = {"alice": ["honest"], "bob": ["honest"], "seed": [0]}
SETTINGS = ("oracle", "prover_oracle", "verifier_oracle", "generation", "prompts")
"""The axes of how a cell's debates are judged and generated, as ``run``'s options of the same
names (``--generation FILE.toml`` and ``--prompts DIR`` as paths); a cell's id digests them where
they are set."""
MAX_CELLS = 100_000
"""The most cells one grid may hold. Each cell is a run with a folder of its own (records,
``summary.json``, ``summary.parquet``) and a row of ``results.parquet``, so 10^5 cells are some
3·10^5 files, past what a sweep's folder and its merge serve well; a bigger study is several grids,
or more trials in each cell. (Without a bound, a grid of 10^7 cells spent hours in expansion.)"""


class GridError(ValueError):
    """A grid file that cannot be read or names something that does not exist."""


def fixed(overrides: list[str] | None) -> dict[str, str]:
    """``-P NAME=VALUE`` overrides as ``{NAME: VALUE}``, for every grid of a file or a table."""
    out = {}
    for text in overrides or ():
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise GridError(f"-P {text!r}: expected NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


def settings(texts: list[str] | None) -> dict[str, Any]:
    """``--set KEY=V1,V2`` axes (as Hydra's multirun sets them), for every grid of a file or alone:
    ``{KEY: [values]}``, sizes and seeds read as whole numbers, ``trials`` as one."""
    out: dict[str, Any] = {}
    for text in texts or ():
        key, sep, listed = text.partition("=")
        key = key.strip()
        if not sep or key not in (*AXES, *SETTINGS, "trials"):
            known = ", ".join((*AXES, *SETTINGS))
            raise GridError(f"--set {text!r}: expected KEY=VALUE[,VALUE...] with KEY one of {known}, trials")
        values: list[Any] = [value.strip() for value in listed.split(",")]
        if key in ("size", "seed", "trials"):
            try:
                values = [int(value) for value in values]
            except ValueError:
                raise GridError(f"--set {text!r}: {key} takes whole numbers") from None
        if key == "trials":
            if len(values) != 1:
                raise GridError(f"--set {text!r}: trials is one number, not an axis")
            out[key] = values[0]
        else:
            out[key] = values
    return out


def load(path: Path | None, overrides: list[str] | None = None, sets: list[str] | None = None) -> list[RunSpec]:
    """The cells of the grid file at ``path`` (None: a grid of ``sets`` alone), in id order, each
    checked (names, parameters); ``overrides`` (``NAME=VALUE``) fix a parameter and ``sets``
    (``KEY=V1,V2``) an axis in every grid."""
    if path is None:
        return expand({}, fixed(overrides), settings(sets))
    try:
        data = read_toml(path)  # bounded in size and nesting
    except FileMistake as err:  # FILE:LINE: cannot read it, too large, not UTF-8, not valid TOML, too deep
        raise GridError(str(err)) from None
    try:
        return expand(data, fixed(overrides), settings(sets))
    except GridError as err:
        raise GridError(f"{path}: {err}") from err


def expand(
    data: dict[str, Any], fixed: dict[str, str] | None = None, sets: dict[str, Any] | None = None
) -> list[RunSpec]:
    """The cells of a parsed grid (see the module's docstring), deduplicated, in id order; ``sets``
    (:func:`settings`) replace an axis in every grid."""
    grids = data.get("grid", [{}])
    if not isinstance(grids, list) or not all(isinstance(g, dict) for g in grids):
        raise GridError("grid must be a list of tables ([[grid]])")
    top = {key: value for key, value in data.items() if key != "grid"}
    tables = []
    for number, grid in enumerate(grids, 1):
        where = f"grid {number}: " if "grid" in data else ""
        try:
            if "grid" in grid:
                raise GridError("grids do not nest")
            params = _params(top.get("params", {})) | _params(grid.get("params", {}))
            merged = top | grid | (sets or {})
            merged["params"] = params | {name: [value] for name, value in (fixed or {}).items()}
            tables.append((where, _axes(merged)))
        except GridError as err:
            raise GridError(where + str(err)) from err
    count = sum(
        math.prod(map(len, [*axes.values(), *params.values()])) * len(combos) for _, (axes, params, _, combos) in tables
    )
    if count > MAX_CELLS:
        raise GridError(f"{count} cells, more than the {MAX_CELLS} a grid may hold; split it into several grids, "
                        "or give each cell more trials")  # fmt: skip
    cells: dict[str, RunSpec] = {}
    for where, axes in tables:
        try:
            for cell in _product(*axes):
                cells[cell.id] = cell
        except GridError as err:
            raise GridError(where + str(err)) from err
    if len(cells) > MAX_CELLS:  # a dataset's items each a cell
        raise GridError(f"{len(cells)} cells with every dataset's items, more than the {MAX_CELLS} a grid may hold")
    return [cells[key] for key in sorted(cells)]


def _params(table: Any) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        raise GridError("params must be a table of NAME = value or [values]")
    return {name: [_scalar(v) for v in _listed(value, f"params.{name}")] for name, value in table.items()}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float | str):
        return str(value)
    raise GridError(f"a parameter's value must be a number, text or boolean, got {value!r}")


def _listed(value: Any, key: str) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise GridError(f"{key}: an empty list makes no cells")
    return values


def _axes(
    table: dict[str, Any],
) -> tuple[dict[str, list[Any]], dict[str, list[str]], int, list[dict[str, Any]]]:
    """One grid's axes (each value checked), its ``params`` axes, its trials and each combination of
    its :data:`SETTINGS` as a cell's fields; no cell is made."""
    unknown = sorted(set(table) - {*AXES, *SETTINGS, "params", "trials"})
    if unknown:
        known = ", ".join((*AXES, *SETTINGS, "params", "trials", "grid"))
        raise GridError(f"unknown key {unknown[0]!r}; use {known}")
    for key in ("protocol", "problem"):
        if key not in table:
            raise GridError(f"no {key} given")
    trials = table.get("trials", 200)
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise GridError(f"trials must be a whole number at least 1, got {trials!r}")
    axes = {key: _axis(key, table[key]) if key in table else DEFAULTS.get(key, [None]) for key in AXES}
    given = {key: [_setting(key, one) for one in _listed(table[key], key)] for key in SETTINGS if key in table}
    combos = [dict(zip(given, values, strict=True)) for values in itertools.product(*given.values())]
    return axes, table["params"], trials, combos


def _setting(key: str, value: Any) -> Any:
    """One value of a :data:`SETTINGS` axis as a cell holds it: an oracle's name (not ``people``,
    whose panel a sweep cannot share), ``--generation``'s keys read from the file, a prompts directory."""
    from debatekit.runs.names import OracleKind, OracleSpec, generation_file, prompt_dir

    if not isinstance(value, str):
        raise GridError(f"{key}: {value!r} is not a name")
    try:
        if key == "generation":
            return generation_file(Path(value))
        if key == "prompts":
            return prompt_dir(Path(value))
        if OracleSpec.parse(value, key).kind is OracleKind.PEOPLE:
            raise GridError(f"{key}: people answer a run of their own (debatekit run --judge-db), not a sweep's cells")
    except UserError as err:
        raise GridError(str(err)) from err
    return value


def _product(
    axes: dict[str, list[Any]], params: dict[str, list[str]], trials: int, combos: list[dict[str, Any]]
) -> list[RunSpec]:
    """The cells of one grid: its axes' product, each with every combination of its settings (``combos``)."""
    from debatekit.runs.names import names_a_model

    cells = _cells(axes, params, trials)
    out = [dataclasses.replace(cell, **setting) for cell in cells for setting in combos]
    for cell in out:
        if cell.generation and not names_a_model(cell):
            raise GridError("generation sets how models answer: name one (llm:PROVIDER/MODEL) as a player or oracle")
    return out


def _cells(axes: dict[str, list[Any]], params: dict[str, list[str]], trials: int) -> list[RunSpec]:
    from debatekit.problems.dataset import is_dataset

    names = sorted(params)
    assignments = [tuple(zip(names, values, strict=True)) for values in itertools.product(*(params[n] for n in names))]
    checked: dict[tuple, tuple[int, tuple[bool, ...]]] = {}  # checked once: the default size, the truths
    cells = []
    for protocol, problem, size, truth, alice, bob, constants, seed in itertools.product(*axes.values()):
        for assigned in assignments:
            if is_dataset(problem):
                chosen = None if constants is None else _constants(constants)
                asked = RunSpec(protocol, problem, size, None if truth is None else Truth(truth), alice, bob, chosen,
                                assigned, seed, trials)  # fmt: skip
                cells += _items(asked)
                continue
            key = (protocol, problem, alice, bob, constants, assigned)
            if key not in checked:
                checked[key] = _checked(*key)
            default_size, truths = checked[key]
            answer = truths[0] if truth is None else truth == "yes"
            if answer not in truths:
                raise GridError(f"truth: {problem} has no {truth!r} instance (its answer is {_said(truths[0])})")
            cells.append(RunSpec(protocol, problem, default_size if size is None else size, Truth(_said(answer)),
                                 alice, bob, None if constants is None else Constants(constants), assigned, seed,
                                 trials))  # fmt: skip
    return cells


def _items(asked: RunSpec) -> list[RunSpec]:
    """A dataset's cells: each item the protocol can play, as :mod:`debatekit.runs.dataset` plays it
    (``DATASET#ID`` at its own truth and size, from its own seed), each checked as any cell is."""
    from debatekit.runs.dataset import item_runs

    try:
        runs = [run for _, _, run in item_runs(asked) if isinstance(run, RunSpec)]
    except UserError as err:
        raise GridError(str(err)) from err
    cells = []
    for run in runs:
        problem = str(run.problem)
        size, truths = _checked(run.protocol, problem, str(run.alice), str(run.bob),
                                None if run.constants is None else run.constants.value, run.params)  # fmt: skip
        cells.append(dataclasses.replace(run, size=size, truth=Truth(_said(truths[0]))))
    return cells


def _constants(value: str) -> Constants:
    try:
        return Constants(value)
    except ValueError:
        raise GridError(f"constants: {value!r} is not one of {', '.join(Constants)}") from None


def _axis(key: str, value: Any) -> list[Any]:
    values = _listed(value, key)
    for one in values:
        if key in ("size", "seed"):
            least = 1 if key == "size" else 0
            if isinstance(one, bool) or not isinstance(one, int) or one < least:
                raise GridError(f"{key}: {one!r} is not a whole number at least {least}")
        elif key == "truth":
            if one not in ("yes", "no", True, False):
                raise GridError(f"truth: {one!r} is not yes or no")
        elif not isinstance(one, str):
            raise GridError(f"{key}: {one!r} is not a name")
    if key == "truth":
        return ["yes" if one in ("yes", True) else "no" for one in values]
    return values


def _checked(
    protocol: str, problem: str, alice: str, bob: str, constants: str | None, params: tuple[tuple[str, str], ...]
) -> tuple[int, tuple[bool, ...]]:
    """The problem's default size and the answers its instances can have (the default first), once
    a cell's names and parameters are known to exist (the size, truth and seed axes do not change
    what is checked)."""
    from debatekit.ledger import Role
    from debatekit.runs.names import configure, problem_for, strategy, with_constants
    from debatekit.runs.names import protocol as protocol_named

    chosen = None if constants is None else _constants(constants)
    try:
        spec = protocol_named(protocol)
        found = problem_for(problem, spec)
        spec, _ = configure(spec, found, with_constants(spec, [f"{name}={value}" for name, value in params], chosen))
        strategy(spec, Role.ALICE, alice)
        strategy(spec, Role.BOB, bob)
    except UserError as err:
        raise GridError(str(err)) from err
    return found.default_size, found.truths


def _said(answer: bool) -> str:
    return "yes" if answer else "no"
