"""What ``debatekit experiment judge-accuracy`` computes (issue 22, point 5): the judge's accuracy
with and without debate, per arm, over items with a known truth.

Items (:class:`Case`): by default the built-in plans in both truths (each plan and its variant); a
dataset's rows (:mod:`debatekit.problems.dataset`) become their plans (one judged step, the
row's question after its passage, or the row's decomposition), so their truth must be yes or no.
An arm plays the items it can (a protocol the plans whose features it needs) and lists the
others as ``skipped``.

Sides: in each protocol's arm Alice argues *yes* (in cross-examination the verifier outputs her
a_T unless a check catches her) and Bob argues *no*. On an item whose truth is
yes, Alice is on the true side and Bob on the false; on a no item the other way round; so over
items in both truths (the built-in plans' default) each debater argues the true and the false side
equally often. The seat on the true side plays honestly (``honest``, or ``llm:P/M`` itself), the
seat on the false side lies (``llm-liar:P/M``, or the built-in liar of :data:`LIARS`, Alice's
replaced by ``--liar`` and Bob's by ``--liar-bob``). An honest LLM argues what its model believes,
so a weak model on the true side may argue the false answer: its arms then measure the debaters as
much as the judge. Each arm reports per debating seat how many decided debates it argued the true
side and the false side (``sides``).

Arms:

* ``direct``: the judge answers the item's top question with no debate: a plan's title with every
  judged step's text (its evidence) as context lines, a dataset row's question with its context.
  Correct iff P[yes] > 1/2 (a model's estimate as its generation states it; the built-in judge's
  is the ground truth P[M = 1]) equals the truth. One judgement per item.
* ``consultancy``: one consultant, Alice, argues an assigned answer, and on every item she is
  assigned the true answer in half the debates and the false one in the other half: ⌈trials/2⌉
  debates each (an odd ``trials`` plays one more an item), honest on the true side, the liar on the
  false. The verifier spot-checks one step it draws uniformly at random, as cross-examination
  checks a challenged step (a judged step asks the judge, a computed step is recomputed): a failed
  check rejects her answer for the other, else hers wins. Played as cross-examination with Bob
  ``point-random`` (a uniformly random step, never accept), which is exactly that spot-check:
  arguing yes, she argues the item's plan; arguing no, she argues yes on its negation
  (:func:`negation`: the plan and one more step, ``not`` of its answer), so that a caught
  consultant loses her answer either way (cross-examination's rejection is a no). A liar whose
  transcript has k wrong steps of the T played is caught with probability k/T.
* each protocol: the debaters in both seats, sides as above; correct iff the verdict equals the truth.

Accuracy is correct / n with a Wilson interval (:func:`debatekit.analysis.stats.wilson`); a debate
left undecided (a model that could not be consulted) is counted apart, in no rate. The interval
counts debates as independent, so each item's debates are played from a seed of their own,
:func:`~debatekit.engine.seeds.item_seed` of the run's seed and the item's name (its negation's:
the name and ``/negated``), as a run over a dataset plays its items: with one seed for every item,
debate i's draws (the judge's sampled answers among them) would be the same on every item.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from debatekit.analysis.stats import wilson
from debatekit.ledger import Role
from debatekit.mistakes import UserError
from debatekit.oracle import Question

if TYPE_CHECKING:
    from debatekit.llm.generation import Generation
    from debatekit.problems import Instance
    from debatekit.problems.dataset import Item
    from debatekit.problems.plan import Plan

DIRECT, CONSULTANCY = "direct", "consultancy"
CONSULTANT_FRAME = "cross-exam"
"""The protocol whose rules consultancy is played on (module docstring)."""
SPOT_CHECK = "point-random"
"""Cross-examination's Bob that names a uniformly random step: the verifier's spot-check."""
DEFAULT_PROTOCOLS = ("cross-exam", "prover-estimator")
LIARS: dict[str, dict[Role, str]] = {
    "cross-exam": {Role.ALICE: "lie-output", Role.BOB: "point-random"},
    "prover-estimator": {Role.ALICE: "bad-proof", Role.BOB: "inverted"},
    "naive-recursive": {Role.ALICE: "wrong-answer", Role.BOB: "random"},
    "stochastic": {Role.ALICE: "influential", Role.BOB: "never-abort"},
}
"""Each protocol's built-in liar by seat, the default where the debaters are built in: Alice's
lies the fewest steps a check can catch (cross-examination's one flipped output, prover-estimator's
flipped proof bits at a leaf its B trusts, stochastic debate's one most influential step); Bob's
challenges at random (cross-examination, naive recursion), estimates the opposite (prover-estimator)
or never aborts (stochastic debate)."""
DEFAULT_TRIALS = 10
PLAYING = (Role.ALICE, Role.BOB)


@dataclass(frozen=True)
class Case:
    """One item: its name, its truth, what a run is given as its problem (a registered plan's name,
    a dataset row's, ``DATASET#ID``, or an instance), its plan, and the direct arm's question."""

    name: str
    truth: bool
    problem: str | Instance
    plan: Plan
    top: Question


@dataclass(frozen=True)
class Arm:
    """One arm's outcome: correct of n decided, per item and answer Alice argued (name, truth, Alice
    argues yes, correct, n; None where no one argues: ``direct``), the items it could not play (name
    and why), debates left undecided, the seats' strategies, and the seats that debate."""

    name: str
    correct: int
    n: int
    items: tuple[tuple[str, bool, bool | None, int, int], ...]
    skipped: tuple[tuple[str, str], ...] = ()
    undecided: int = 0
    seats: dict[str, dict[str, str]] = field(default_factory=dict)
    debating: tuple[Role, ...] = ()
    """Alice for consultancy, both seats for a protocol, none for ``direct``."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.correct, self.n)

    @property
    def sides(self) -> dict[str, dict[str, int]]:
        """Per debating seat, the decided debates in which it argued the true side and the false side
        (Alice argues what ``items`` say, Bob the other answer)."""
        sides = {}
        for role in self.debating:
            true = sum(n for _, truth, yes, _, n in self.items if (yes == truth) is (role is Role.ALICE))
            sides[role.value] = {"true": true, "false": sum(n for *_, n in self.items) - true}
        return sides

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "accuracy": None if not self.n else self.accuracy,
            "ci": list(self.ci),
            "n": self.n,
            "correct": self.correct,
            "undecided": self.undecided,
            "seats": self.seats,
            "sides": self.sides,
            "items": [
                {"item": name, "truth": _answer(truth), "alice_argues": _answer(yes), "correct": c, "n": n}
                for name, truth, yes, c, n in self.items
            ],
            "skipped": [{"item": name, "why": why} for name, why in self.skipped],
        }


def _answer(yes: bool | None) -> str | None:
    """A truth or an argued answer in words (None: no one argued)."""
    return None if yes is None else "yes" if yes else "no"


@dataclass(frozen=True)
class JudgeAccuracy:
    """The experiment's arms and what fixed it."""

    debaters: str
    judge: str
    dataset: str
    trials: int
    seed: int
    arms: tuple[Arm, ...]
    generation: dict[str, Any] = field(default_factory=dict)
    """``--generation``'s keys (none: the models' defaults)."""

    def to_json(self) -> dict[str, Any]:
        """``experiment judge-accuracy --json`` (the contract in DESIGN.md: ``arms`` with name,
        accuracy, ci, n)."""
        return {
            "experiment": "judge-accuracy",
            "debaters": self.debaters,
            "judge": self.judge,
            "dataset": self.dataset,
            "trials": self.trials,
            "seed": self.seed,
            "generation": self.generation,
            "sides": "each protocol: Alice argues yes, Bob no, the true side's seat honest, the false side's the "
            "liar; consultancy: Alice argues the true answer in half the debates on every item, the false in half",
            "direct": "P[yes] > 1/2 on the top question (a plan's title, its judged steps' texts as context)",
            "arms": [arm.to_json() for arm in self.arms],
        }


def plan_cases() -> tuple[Case, ...]:
    """The built-in plans in both truths (a plan and its variant), as their registered problems."""
    from debatekit.problems.plan_file import PARSERS, PLANS
    from debatekit.problems.plan_file import load as load_plan

    cases = []
    for file in sorted(PLANS.iterdir(), key=lambda f: f.name):
        if file.name.rpartition(".")[2] in PARSERS:
            for k, plan in enumerate(load_plan(file)):
                cases.append(Case(plan.name + ("/variant" if k else ""), plan.truth, plan.name, plan, evidence(plan)))
    return tuple(cases)


def evidence(plan: Plan) -> Question:
    """The direct arm's question on a plan: its title, with every judged step's text as a context line."""
    from debatekit.problems.plan import Ask

    return Question(plan.title, tuple(step.text for step in plan.steps if isinstance(step, Ask)))


def dataset_cases(where: str, items: Sequence[Item]) -> tuple[Case, ...]:
    """A dataset's rows as their plans (:meth:`~debatekit.problems.dataset.Item.plan`: one judged
    step, or the row's decomposition), each its problem ``DATASET#ID``; a row whose ground truth is
    a probability other than 0 or 1 has no truth to be accurate about: a mistake."""
    from debatekit.problems.dataset import ITEM

    cases = []
    for item in items:
        if item.p_yes not in (0.0, 1.0):
            raise UserError(f"{where}: row {item.id!r}: p_yes {item.p_yes:g} is no known truth; "
                            "judge-accuracy needs truth yes or no")  # fmt: skip
        name = f"{where}{ITEM}{item.id}"
        plan = item.plan(name, name)
        cases.append(Case(item.id, plan.truth, name, plan, item.query()))
    return tuple(cases)


def cases_of(dataset: str | None) -> tuple[tuple[Case, ...], str]:
    """The items and their description: the built-in plans (None), the shipped claims, or a file."""
    from debatekit.problems.dataset import DatasetError, load, source

    if dataset is None:
        return plan_cases(), "built-in plans in both truths"
    try:
        return dataset_cases(dataset, load(source(dataset))), dataset
    except DatasetError as err:
        raise UserError(str(err)) from None


def judge_accuracy(
    debaters: str,
    judge: str = "builtin",
    dataset: str | None = None,
    protocols: Sequence[str] | None = None,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    liar: str | None = None,
    cases: Sequence[Case] | None = None,
    generation: tuple[tuple[str, Any], ...] = (),
    liar_bob: str | None = None,
) -> JudgeAccuracy:
    """The experiment (module docstring): ``debaters`` (``honest``, the built-in players, or
    ``llm:PROVIDER/MODEL``) judged by ``judge`` (``builtin``, the items' ground truth, or
    ``llm:PROVIDER/MODEL``) on ``cases`` (default: ``dataset``'s, :func:`cases_of`), ``trials``
    debates per item and arm; ``liar`` and ``liar_bob`` replace every arm's built-in Alice and Bob
    liars; models generate as ``generation``'s keys say (``--generation``). Mistakes are
    :class:`UserError`."""
    from debatekit.runs.names import OracleKind, OracleSpec, generation_of, model_spec
    from debatekit.runs.spec import positive

    positive(trials, "--trials")
    model = model_spec(debaters)
    if debaters != "honest" and model is None:
        raise UserError(f"--debaters is honest (the built-in players) or llm:PROVIDER/MODEL, not {debaters!r}")
    for option, named in (("--liar", liar), ("--liar-bob", liar_bob)):
        if model is not None and named is not None:
            raise UserError(f"{option} names a built-in liar; with llm debaters the liar is llm-liar:PROVIDER/MODEL")
    spec = OracleSpec.parse(judge, "--judge")
    if spec.kind not in (OracleKind.BUILTIN, OracleKind.MODEL):
        raise UserError(f"--judge is builtin (the ground truth) or llm:PROVIDER/MODEL, not {judge!r}")
    chosen = tuple(dict.fromkeys(DEFAULT_PROTOCOLS if protocols is None else protocols))
    unknown = [name for name in chosen if name not in LIARS]
    if unknown or not chosen:
        raise UserError(
            f"--protocols: judge-accuracy plays {', '.join(LIARS)}, not {unknown[0] if unknown else '(none)'!r}"
        )
    liars = _liars(chosen, liar, liar_bob)
    chosen_generation = generation_of(generation)
    if cases is None:
        cases, where = cases_of(dataset)
    else:
        where = dataset or "given cases"
    arms = [_direct(cases, judge, spec.model if spec.kind is OracleKind.MODEL else None, chosen_generation)]
    played = {"judge": judge, "seed": seed, "generation": generation}
    consultant = liars[CONSULTANT_FRAME][Role.ALICE] if model is None else f"llm-liar:{model}"
    arms.append(_consultancy(cases, debaters, consultant, -(-trials // 2), **played))
    for name in chosen:
        lying = liars[name] if model is None else {role: f"llm-liar:{model}" for role in PLAYING}
        arms.append(_debated(name, cases, debaters, lying, trials, **played))
    return JudgeAccuracy(debaters, judge, where, trials, seed, tuple(arms), dict(generation))


def _liars(chosen: Sequence[str], liar: str | None, liar_bob: str | None) -> dict[str, dict[Role, str]]:
    """Each protocol's liars, Alice's replaced by ``liar`` (which every protocol played, consultancy's
    included, must have) and Bob's by ``liar_bob`` (which every protocol in ``chosen`` must have:
    consultancy's Bob is the spot-check)."""
    from debatekit.protocols.registry import PROTOCOLS

    liars = {name: dict(seats) for name, seats in LIARS.items()}
    replaced = ((Role.ALICE, liar, "--liar", (CONSULTANT_FRAME, *chosen)), (Role.BOB, liar_bob, "--liar-bob", chosen))
    for role, named, option, where in replaced:
        if named is None:
            continue
        for name in dict.fromkeys(where):
            if named not in PROTOCOLS[name].strategies[role] or named == "honest":
                known = ", ".join(s for s in PROTOCOLS[name].strategies[role] if s != "honest")
                raise UserError(f"{option}: {name} has no {role.value.title()} liar {named!r} (its liars: {known})")
        for seats in liars.values():
            seats[role] = named
    return liars


def negation(plan: Plan) -> Plan:
    """``plan`` arguing the other answer: its steps and one more, the ``not`` of its answer, so T + 1
    steps and the other truth (how consultancy's consultant argues no: yes on the negation)."""
    from debatekit.problems.plan import Compute, Kind, Plan, ground_truth

    last = plan.steps[-1]
    steps = (*plan.steps, Compute(f"not-{last.id}", f"not: {last.claim}", (len(plan.steps) - 1,), Kind.NOT))
    probability, lipschitz = ground_truth(steps, lambda why, step: ValueError(f"{plan.where}: {why}"))
    return Plan(f"not-{plan.name}", f"not: {plan.title}", plan.where, plan.source, plan.note, not plan.truth, steps,
                probability, lipschitz)  # fmt: skip


def _direct(cases: Sequence[Case], judge: str, model: str | None, generation: Generation | None) -> Arm:
    """The judge's answer to each item's top question, no debate."""
    if model is None:
        answers: list[float | str] = [case.plan.probability for case in cases]
    else:
        answers = _asked(model, [case.top for case in cases], generation)
    scored = [(case, p) for case, p in zip(cases, answers, strict=True) if isinstance(p, float)]
    items = tuple((case.name, case.truth, None, int((p > 0.5) == case.truth), 1) for case, p in scored)
    skipped = tuple((case.name, p) for case, p in zip(cases, answers, strict=True) if isinstance(p, str))
    seats = {"judge": {"alone": judge}}
    return Arm(DIRECT, sum(c for *_, c, _ in items), len(items), items, skipped, seats=seats)


def _asked(model: str, questions: Sequence[Question], generation: Generation | None) -> list[float | str]:
    """The model of the judge's P[yes] on each question, or why it could not give it."""
    try:
        from debatekit.llm.backend import ConfigError, ModelError
        from debatekit.llm.players import model_judge
    except ImportError as err:
        raise UserError(f"--judge llm:{model} needs the llm extra: pip install '.[llm]' ({err.name})") from err
    try:
        oracle = model_judge(model, generation=generation)
    except ConfigError as err:
        raise UserError(f"--judge: {err}") from err

    async def one(question: Question) -> float | str:
        try:
            return float((await oracle.estimated(question, Role.VERIFIER)).p_yes)
        except ModelError as err:
            return f"{type(err).__name__}: {err}"

    async def every() -> list[float | str]:
        return list(await asyncio.gather(*map(one, questions)))

    return asyncio.run(every())


Debates = tuple[bool, str, str, int]
"""One item's debates in an arm: whether Alice argues yes (else no: yes on the negation), Alice,
Bob, and how many."""


def _consultancy(cases: Sequence[Case], debaters: str, liar: str, half: int, **played: Any) -> Arm:
    """Consultancy (module docstring): on every item ``half`` debates with the consultant honest on
    the true side, then ``half`` with ``liar`` on the false side, each against the spot-check."""

    def debates(case: Case) -> list[Debates]:
        return [(case.truth, debaters, SPOT_CHECK, half), (not case.truth, liar, SPOT_CHECK, half)]

    seats = {"true side": {"alice": debaters, "bob": SPOT_CHECK}, "false side": {"alice": liar, "bob": SPOT_CHECK}}
    return _played(CONSULTANCY, CONSULTANT_FRAME, cases, debates, seats, (Role.ALICE,), **played)


def _debated(
    protocol: str, cases: Sequence[Case], debaters: str, liars: dict[Role, str], trials: int, **played: Any
) -> Arm:
    """``trials`` debates of ``protocol`` per item: Alice argues yes and Bob no, the true side's seat
    ``debaters``, the false side's its liar."""

    def debates(case: Case) -> list[Debates]:
        alice = debaters if case.truth else liars[Role.ALICE]
        return [(True, alice, liars[Role.BOB] if case.truth else debaters, trials)]

    seats = {
        "yes items": {"alice": debaters, "bob": liars[Role.BOB]},
        "no items": {"alice": liars[Role.ALICE], "bob": debaters},
    }
    return _played(protocol, protocol, cases, debates, seats, PLAYING, **played)


def _played(
    arm: str,
    protocol: str,
    cases: Sequence[Case],
    debates: Callable[[Case], list[Debates]],
    seats: dict[str, dict[str, str]],
    debating: tuple[Role, ...],
    *,
    judge: str,
    seed: int,
    generation: tuple[tuple[str, Any], ...],
) -> Arm:
    """Each item's ``debates`` in ``protocol``, on the item's plan where Alice argues yes and on its
    :func:`negation` where she argues no; correct iff the verdict on what was played is its truth."""
    from debatekit.engine.seeds import item_seed
    from debatekit.progress import progress
    from debatekit.protocols.registry import PROTOCOLS
    from debatekit.runs.prepare import play, prepare
    from debatekit.runs.spec import RunSpec, Truth

    spec = PROTOCOLS[protocol]
    items, skipped, undecided = [], [], 0
    for case in cases:
        missing = spec.needs - case.plan.features
        if missing:
            skipped.append((case.name, f"{protocol} needs {', '.join(sorted(f.value for f in missing))}"))
            continue
        for yes, alice, bob, trials in debates(case):
            problem = case.problem if yes else negation(case.plan).instance()
            truth = case.truth if yes else not case.truth
            own = item_seed(seed, case.name if yes else f"{case.name}/negated")
            run = RunSpec(
                protocol=protocol, problem=problem, truth=None if not isinstance(problem, str)
                else Truth.yes if truth else Truth.no, alice=alice, bob=bob, seed=own, trials=trials,
                verifier_oracle=judge, generation=generation,
            )  # fmt: skip
            with progress(trials, f"{arm}: {case.name}" + ("" if yes else " (negated)")) as advance:
                result = play(prepare(run), advance)
            accepted = round(result.accept_rate * result.trials) if result.trials else 0
            items.append((case.name, case.truth, yes, accepted if truth else result.trials - accepted, result.trials))
            undecided += result.undecided
    correct, n = sum(c for *_, c, _ in items), sum(n for *_, n in items)
    return Arm(arm, correct, n, tuple(items), tuple(skipped), undecided, seats, debating)
