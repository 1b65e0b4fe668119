"""A run over a dataset (issue 22, point 4): ``debatekit run PROTOCOL --problem FILE.csv|jsonl`` (or a
shipped dataset's name) plays each item as a run of its own, on the item's plan
(:meth:`debatekit.problems.dataset.Item.plan`) with the item's own truth, and pools them.

Item ``ID`` plays as ``--problem DATASET#ID --seed S_ID``, S_ID = :func:`~debatekit.engine.seeds.item_seed`
of the run's seed and the id, so that one item's line can be run again alone, and the items'
debates are independent. Items the protocol cannot play (a judged step that is not certain, for
the protocols that assume a deterministic oracle) are listed as skipped, with the reason.

Pooled: over the decided debates of the items played, each item weighing its debates (the same
number each), with Wilson intervals (:func:`debatekit.analysis.stats.wilson`): the accept rate on
the items whose truth is yes (completeness) and on those whose truth is no (soundness error), and
the rate at which the verdict is the truth. Against the theorem: how many items' intervals reach
the protocol's promise on their side (accept >= c on yes, <= s on no, as the report's ``holds``),
counting only items whose honest side plays honestly (the theorem promises nothing otherwise).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debatekit.analysis.stats import accept_promise, reaches, wilson
from debatekit.mistakes import UserError
from debatekit.runs.spec import RunSpec

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import RunResult


@dataclass(frozen=True)
class Played:
    """One item: its id and truth, the run it was played as, and its result (None: ``skipped`` says why)."""

    id: str
    truth: bool
    run: RunSpec
    result: RunResult | None
    skipped: str = ""

    @property
    def accepted(self) -> int:
        """Its decided debates the verifier accepted."""
        assert self.result is not None
        return round(self.result.accept_rate * self.result.trials)

    @property
    def promised(self) -> bool | None:
        """Whether what the theorem promises holds (module docstring): the accept rate's interval
        reaches the promise on its side, and, in a game with payoffs, A's mean payoff's interval its
        bound (:meth:`~debatekit.protocols.payoffs.Payoffs.holds`); None where it promises neither
        (a dishonest honest side, a vacuous bound)."""
        result = self.result
        if result is None:
            return None
        g = result.guarantee
        bound = accept_promise(self.truth, g.completeness, g.soundness)
        checks = []
        if (result.alice if self.truth else result.bob) == "honest" and bound is not None:
            checks.append(reaches(self.truth, bound, result.accept_ci))
        payoff = None if result.payoffs is None else result.payoffs.holds()
        if payoff is not None:
            checks.append(payoff)
        return all(checks) if checks else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "truth": "yes" if self.truth else "no", "problem": self.run.problem,
                               "seed": self.run.seed}  # fmt: skip
        if self.result is None:
            return out | {"skipped": self.skipped}
        return out | {"promised": self.promised} | self.result.to_json()


@dataclass(frozen=True)
class Rate:
    """k of n with its Wilson interval."""

    k: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def ci(self) -> tuple[float, float] | None:
        """The rate's Wilson 95% interval (None with no debates)."""
        return wilson(self.k, self.n) if self.n else None

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "n": self.n, "rate": self.rate, "ci": None if self.ci is None else list(self.ci)}


@dataclass(frozen=True)
class DatasetResult:
    """A run over a dataset: what was asked (the run with ``problem`` the dataset) and each item."""

    run: RunSpec
    items: tuple[Played, ...]
    asked: int
    """The dataset's items: more than ``items`` when a signal stopped the run (:func:`played`)."""

    @property
    def played(self) -> tuple[Played, ...]:
        return tuple(item for item in self.items if item.result is not None)

    def pooled(self) -> dict[str, Rate]:
        """The pooled rates of the module docstring: ``accept_yes``, ``accept_no``, ``correct``."""
        yes = [item for item in self.played if item.truth]
        no = [item for item in self.played if not item.truth]
        n_yes = sum(item.result.trials for item in yes)  # type: ignore[union-attr]
        n_no = sum(item.result.trials for item in no)  # type: ignore[union-attr]
        k_yes, k_no = sum(item.accepted for item in yes), sum(item.accepted for item in no)
        return {"accept_yes": Rate(k_yes, n_yes), "accept_no": Rate(k_no, n_no),
                "correct": Rate(k_yes + n_no - k_no, n_yes + n_no)}  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """``run --json`` over a dataset: the run, the pooled rates, the items within their promise, each item."""
        judged = [item.promised for item in self.played if item.promised is not None]
        return {
            "dataset": self.run.problem,
            "run": self.run.to_json(),
            "pooled": {name: rate.to_json() for name, rate in self.pooled().items()},
            "promised": {"held": sum(judged), "of": len(judged)},
            "undecided": sum(item.result.undecided for item in self.played),  # type: ignore[union-attr]
            "skipped": sum(item.result is None for item in self.items),
            "interrupted": len(self.items) < self.asked,
            "items": [item.to_json() for item in self.items],
        }


def debates(runs: list[tuple[str, bool, RunSpec | str]]) -> int:
    """The debates ``runs`` (:func:`item_runs`) play: the items played, not those skipped."""
    return sum(item.trials for _, _, item in runs if isinstance(item, RunSpec))


def is_dataset_run(run: RunSpec) -> bool:
    """Whether ``run``'s problem names a whole dataset."""
    from debatekit.problems.dataset import is_dataset

    return isinstance(run.problem, str) and is_dataset(run.problem)


def item_runs(run: RunSpec) -> list[tuple[str, bool, RunSpec | str]]:
    """Each item of ``run``'s dataset as (id, truth, the run it plays as, or why it cannot be played
    by the protocol); the dataset's mistakes, and a ``--truth`` (each item has its own), are a :class:`UserError`."""
    from debatekit.engine.seeds import item_seed
    from debatekit.problems.dataset import ITEM, DatasetError, named
    from debatekit.runs.names import protocol

    dataset = str(run.problem)
    if run.truth is not None:
        raise UserError(f"{dataset}: each item of a dataset has its own truth; drop --truth (or name one item, "
                        f"{dataset}{ITEM}ID)")  # fmt: skip
    if run.size is not None:
        raise UserError(f"{dataset}: an item's size is its plan's steps; drop --size")
    spec = protocol(run.protocol)
    try:
        items = named(dataset)
        out: list[tuple[str, bool, RunSpec | str]] = []
        for item in items:
            name = f"{dataset}{ITEM}{item.id}"
            missing = spec.needs - item.plan(name, dataset).features  # a row without a truth: its DatasetError
            if missing:
                out.append((item.id, item.truth, f"{spec.name} needs {', '.join(sorted(f.value for f in missing))}"))
            else:
                seed = item_seed(run.seed, item.id)
                out.append((item.id, item.truth, dataclasses.replace(run, problem=name, seed=seed)))
    except DatasetError as err:
        raise UserError(str(err)) from None
    if all(isinstance(played, str) for _, _, played in out):
        raise UserError(f"{spec.name} can play no item of {dataset}: {out[0][2]}")
    return out


def played(
    run: RunSpec, runs: list[tuple[str, bool, RunSpec | str]], progress: Callable[[int], None] | None = None
) -> DatasetResult:
    """Every item of ``run``'s dataset played (module docstring), as :func:`item_runs` gave them
    (``runs``), each prepared and played as ``run`` plays one problem; a mistake in any is a
    :class:`UserError` before any debate. A signal stops the run with
    :class:`~debatekit.engine.interrupts.Interrupted` carrying the items finished, in order, and the
    debates the item it stopped had finished (its result's ``trials_asked`` set)."""
    from debatekit.engine.interrupts import Interrupted
    from debatekit.problems.dataset import ITEM
    from debatekit.runs.prepare import play, prepare

    items: list[Played] = []
    playing = None
    try:
        ready = {ident: prepare(item) for ident, _, item in runs if isinstance(item, RunSpec)}
        for ident, truth, item in runs:
            if isinstance(item, str):
                items.append(Played(ident, truth, dataclasses.replace(run, problem=f"{run.problem}{ITEM}{ident}"),
                                    None, item))  # fmt: skip
            else:
                playing = (ident, truth, ready[ident].run)
                items.append(Played(*playing, play(ready[ident], progress)))
                playing = None
    except Interrupted as stop:
        if playing is not None and stop.result is not None:  # the item stopped: its debates finished
            items.append(Played(*playing, stop.result))
        stop.result = DatasetResult(run, tuple(items), len(runs))
        raise
    return DatasetResult(run, tuple(items), len(runs))
