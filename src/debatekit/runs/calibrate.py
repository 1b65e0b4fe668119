"""What ``debatekit calibrate`` computes (issue 22, point 6): a model of the judge asked every
claim of a dataset (default: every built-in plan's questions), scored against the ground truth
beside the always-0.5 baseline (:mod:`debatekit.analysis.calibration`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debatekit.analysis.calibration import Calibration, baseline, calibration
from debatekit.mistakes import UserError
from debatekit.problems.dataset import Item

if TYPE_CHECKING:
    from debatekit.llm.generation import Estimate


@dataclass(frozen=True)
class Calibrated:
    """The judge's P[yes] on each item it answered, its scores and the baseline's on those items,
    and the items it could not answer (id and why)."""

    judge: str
    dataset: str
    generation: dict[str, Any]
    answered: tuple[tuple[Item, Estimate], ...]
    unanswered: tuple[tuple[str, str], ...]
    model: Calibration
    chance: Calibration

    @property
    def worse_than_chance(self) -> bool:
        return self.model.worse_than(self.chance)

    @property
    def dropped(self) -> float | None:
        """The mean first-token mass on neither yes nor no, where log-probabilities were renormalised."""
        masses = [e.dropped for _, e in self.answered if e.dropped is not None]
        return sum(masses) / len(masses) if masses else None

    def to_json(self) -> dict[str, Any]:
        """``calibrate --json``: the scores flat, the baseline's under ``baseline``, each item's P[yes]."""
        scores = self.model.to_json()
        return {
            "judge": self.judge,
            "dataset": self.dataset,
            "generation": self.generation,
            **scores,
            "baseline": {key: value for key, value in self.chance.to_json().items() if key != "bins"} | {"p_yes": 0.5},
            "worse_than_chance": self.worse_than_chance,
            "dropped_mean": self.dropped,
            "unanswered": [{"id": ident, "error": why} for ident, why in self.unanswered],
            "items": [
                {"id": item.id, "p_yes": e.p_yes, "truth": item.p_yes} | e.to_json() for item, e in self.answered
            ],
        }


def calibrated(judge: str, dataset: str | None, generation: tuple[tuple[str, Any], ...] = ()) -> Calibrated:
    """``judge`` (``llm:PROVIDER/MODEL``) on ``dataset``'s claims (a file; ``claims``, the shipped
    dataset; None: the built-in plans' questions), generating as ``generation``'s keys say; its
    mistakes are :class:`UserError`."""
    from debatekit.problems.dataset import DatasetError, load, plan_items, source
    from debatekit.runs.names import OracleKind, OracleSpec, generation_of

    spec = OracleSpec.parse(judge, "--judge")
    if spec.kind is not OracleKind.MODEL:
        raise UserError(f"--judge is a model of the judge, llm:PROVIDER/MODEL, not {judge!r}")
    try:
        items = plan_items() if dataset is None else load(source(dataset))
    except DatasetError as err:
        raise UserError(str(err)) from None
    chosen = generation_of(generation)
    try:
        from debatekit.llm.backend import ConfigError
        from debatekit.llm.generation import Estimate
        from debatekit.llm.players import model_judge
    except ImportError as err:
        raise UserError(f"--judge {judge} needs the llm extra: pip install '.[llm]' ({err.name})") from err
    try:
        oracle = model_judge(spec.model, generation=chosen)
    except ConfigError as err:
        raise UserError(f"--judge: {err}") from err
    answers = asyncio.run(_asked(oracle, items))
    answered = tuple((item, e) for item, e in zip(items, answers, strict=True) if isinstance(e, Estimate))
    unanswered = tuple((item.id, e) for item, e in zip(items, answers, strict=True) if isinstance(e, str))
    if not answered:
        raise UserError(f"--judge {judge} answered none of the {len(items)} claims, e.g. {unanswered[0][1]}")
    truth = [item.p_yes for item, _ in answered]
    return Calibrated(
        judge, dataset or "built-in plans", oracle.generation.to_json(), answered, unanswered,
        calibration([e.p_yes for _, e in answered], truth), baseline(truth),
    )  # fmt: skip


async def _asked(oracle: Any, items: tuple[Item, ...]) -> list[Estimate | str]:
    """Each item's P[yes] with its estimator, or why the model could not give it."""
    from debatekit.ledger import Role
    from debatekit.llm.backend import ModelError

    async def one(item: Item) -> Estimate | str:
        try:
            return await oracle.estimated(item.query(), Role.VERIFIER)
        except ModelError as err:
            return f"{type(err).__name__}: {err}"

    return list(await asyncio.gather(*map(one, items)))
