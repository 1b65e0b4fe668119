"""A :class:`~debatekit.runs.spec.RunSpec` resolved once into the objects that play it
(:class:`Prepared`: the protocol with its parameters bound, the instance, the strategies, the
oracles by role) and played; shared by ``debatekit run``, :func:`debatekit.run` and a sweep's cells."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.mistakes import UserError
from debatekit.players.base import Shape
from debatekit.runs.spec import MAX_TRIALS, RunSpec, Truth, in_flight, memory_limit, positive, time_limit

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import Oracles, RunResult
    from debatekit.engine.isolation import Seating
    from debatekit.ledger import Role
    from debatekit.llm.generation import Generation
    from debatekit.players.base import Strategy
    from debatekit.problems import Instance
    from debatekit.protocols.spec import ProtocolSpec


@dataclass(frozen=True)
class Isolated:
    """A user's strategy to be played in workers (:class:`~debatekit.engine.isolation.Pool`):
    the name results and records give it, and the ``module:attr`` its worker imports."""

    name: str
    path: str
    shape: Shape = Shape.ARRAYS
    """Its shape in stochastic debate, as its :class:`~debatekit.players.base.Strategy` declares it."""
    refuses: Callable[[Instance], str | None] | None = None
    """Why it cannot play an instance, as an API object's Strategy declares (checked before the run)."""


@dataclass(frozen=True)
class Panel:
    """People answering the verifier: the answers its one query asks (R), the expected verifier
    judgements per debate with honest players (an upper bound), and the most answers the judges
    invited can give one question (judges x answers per judge)."""

    needed: int
    expected: float
    judges: int
    most: int


@dataclass(frozen=True)
class Prepared:
    """A run resolved and checked: ``run`` is the run as played, every name resolved (the
    protocol's and problem's names, the size, the parameters in effect, the strategies' names,
    objects as their descriptions), the form logs and ``--json`` write; the protocol with its
    parameters, the instance, the strategies, the oracles routed by role, the parameters in
    effect, whether a model plays or judges, and where each seat's player runs (``seating``; a
    user's strategy to be played in workers is an :class:`Isolated`, its pool opened by :func:`play`)."""

    run: RunSpec
    spec: ProtocolSpec
    instance: Instance
    alice: Strategy | Isolated
    bob: Strategy | Isolated
    oracles: Oracles
    params: dict[str, Any]
    models: bool
    seating: dict[Role, Seating]
    people: Panel | None = None
    """What people answering the verifier are asked, when they are (checked against the panel)."""
    prompts: dict[str, dict[str, str]] = field(default_factory=dict)
    """The prompt each model role read (``alice``, ``bob``, ``prover_oracle``, ``verifier_oracle``):
    its file and SHA-256, for the record's header."""

    @property
    def title(self) -> str:
        """``PROTOCOL on PROBLEM``, for a progress bar."""
        return f"{self.spec.name} on {self.run.problem}"


def prepare(run: RunSpec) -> Prepared:
    """Resolve and check ``run`` as ``debatekit run`` does (``UserError`` for a mistake): names,
    the instance (or the one given), strategies that can play it, the oracles; nothing is played
    or written."""
    from debatekit.ledger import Role
    from debatekit.problems import Instance
    from debatekit.runs.names import (
        configure,
        generation_of,
        instance,
        names_a_model,
        oracles,
        params_json,
        problem_for,
        prompt_dir,
        protocol,
        with_constants,
    )

    spec = protocol(run.protocol)
    given = run.problem if isinstance(run.problem, Instance) else None
    found = None if given is not None else problem_for(str(run.problem), spec)
    spec, problem_values = configure(spec, found, with_constants(spec, run.assignments(), run.constants))
    if positive(run.trials, "--trials") > MAX_TRIALS:
        raise UserError(f"--trials is at most {MAX_TRIALS:.0e} in one run, got {run.trials}; spread more over seeds "
                        "in a sweep (debatekit sweep)")  # fmt: skip
    in_flight(run.concurrency)
    time_limit(run.move_timeout)
    memory_limit(run.player_memory)
    if run.seed < 0:
        raise UserError(f"--seed must be at least 0, got {run.seed}")
    if given is not None:
        case = _own(given, run)
    else:
        assert found is not None
        case = instance(found, run.size, run.truth, run.seed, problem_values)
    sides = (Role.ALICE, run.alice), (Role.BOB, run.bob)
    generation = generation_of(run.generation)
    prompts = prompt_dir(run.prompts)
    seated = {role: _seated(spec, role, given, run.trust_players, prompts, generation) for role, given in sides}
    for role, (chosen, _) in seated.items():
        if chosen.refuses is not None and (why := chosen.refuses(case)):
            raise UserError(f"{role.value} strategy {chosen.name!r} cannot play this instance: {why}")
    players = seated[Role.ALICE][0], seated[Role.BOB][0]
    positive(run.answers_per_judge, "--answers-per-judge")
    routed = oracles(case, run.oracle, run.prover_oracle, run.verifier_oracle, run.judge_db, run.answers_per_judge,
                     run.reuse_answers, generation, prompts)  # fmt: skip
    models = names_a_model(run)
    if run.generation and not models:
        raise UserError("--generation sets how models answer: name one (llm:PROVIDER/MODEL) as a player or an oracle")
    params = params_json(spec, problem_values)
    played = replace(
        run,
        protocol=spec.name,
        problem=case.problem if found is None else found.name,
        size=case.size,
        truth=Truth.yes if case.truth else Truth.no,
        alice=players[0].name,
        bob=players[1].name,
        params=tuple(params.items()),
    )
    seating = {role: where for role, (_, where) in seated.items()}
    people = _panel(spec, case, routed.verifier, run.answers_per_judge)
    read = _prompts_read(sides, routed, prompts, generation) if models else {}
    return Prepared(played, spec, case, *players, routed, params, models, seating, people, read)


def _prompts_read(
    sides: tuple[tuple[Role, Any], ...], routed: Oracles, prompts: Path | None, generation: Generation | None
) -> dict[str, dict]:
    """The prompt each model role reads, by role: each LLM player's (by its role and side) and each
    model of the judge's."""
    from debatekit.llm.judge import ModelJudge
    from debatekit.llm.players import prompt_for
    from debatekit.runs.names import model_player

    read = {}
    for role, given in sides:
        named = model_player(given) if isinstance(given, str) else None
        if named is not None:
            read[role.value] = prompt_for(role, named[1], prompts, generation=generation).json()
    for option, oracle in (("prover_oracle", routed.provers), ("verifier_oracle", routed.verifier)):
        if isinstance(oracle, ModelJudge):
            read[option] = oracle.prompt.json()
    return read


def _panel(spec: ProtocolSpec, case: Instance, verifier: Any, per_judge: int) -> Panel | None:
    """People's load when people answer the verifier; a query that needs more answers than the
    judges invited can give is the user's mistake, found before any task is created."""
    if not getattr(verifier, "waits", False):
        return None
    try:
        from debatekit.judge.people import People
    except ImportError:  # no judge extra: no people
        return None
    from debatekit.protocols.stochastic.rules import Unplannable

    if not isinstance(verifier, People):
        return None
    try:
        needed, expected = (1, float(spec.guarantee(case).verifier_queries)) if spec.panel is None else spec.panel(case)
    except Unplannable as err:  # as play says it: the planned constants at a size past the planner's reach
        raise UserError(f"{spec.name} cannot be planned for {case.problem} at --size {case.size}: {err}") from err
    judges = verifier.store.judge_count()
    most = judges * per_judge
    if needed > most:
        from debatekit.judge.database import redacted

        db = redacted(verifier.store.location)
        if spec.panel is None or most == 0:
            fix = f"invite judges first: debatekit judge invite NAME --db {db}"
        else:
            fix = (f"plan for it: debatekit plan --K {float(case.lipschitz or 0)!r} --T {spec.length(case)} "
                   f"--verifier-budget {most}, then run with -P verifier_budget={most}")  # fmt: skip
        raise UserError(
            f"{spec.name} asks people for {needed} answers to one question, and the panel can give {most} "
            f"({judges} judges x {per_judge} answers per judge in {db}); {fix}"
        )
    return Panel(needed, expected, judges, most)


def _seated(
    spec: ProtocolSpec, role: Role, given: Any, trust: bool, prompts: Path | None, generation: Generation | None = None
) -> tuple[Strategy | Isolated, Seating]:
    """``role``'s strategy and where it runs: a built-in inline, a model's client in process, a
    user's strategy in workers (:class:`Isolated`: by its ``module:attr``, never imported here),
    or inline on the user's word (``trust``) or where the protocol's players are not isolated yet."""
    from debatekit.engine.isolation import Seating, spec_of
    from debatekit.players.base import Strategy, StrategyError
    from debatekit.runs.names import from_here, model_player, player

    if isinstance(given, str):
        if model_player(given) is not None:
            return player(spec, role, given, prompts, generation), Seating.CLIENT
        if given in spec.strategies[role] or ":" not in given:  # a built-in, or a mistake named
            return player(spec, role, given), Seating.BUILT_IN
    elif isinstance(given, Strategy) and given.trusted:
        return player(spec, role, given), Seating.BUILT_IN
    if trust or not spec.isolated:
        return player(spec, role, given), Seating.TRUSTED if trust else Seating.NOT_YET
    if isinstance(given, str):
        from_here()  # the worker imports it from this process's path
        return Isolated(given, given), Seating.WORKER
    chosen = player(spec, role, given)
    try:
        isolated = Isolated(chosen.name, spec_of(chosen.factory), chosen.shape, chosen.refuses)
    except StrategyError as err:
        raise UserError(f"{role.value}: {err} (trust=True in the API, --trust-players on the command line)") from None
    return isolated, Seating.WORKER


def _own(given: Instance, run: RunSpec) -> Instance:
    """A hand-built instance, checked against the size asked for and named as the object it is:
    its records and results say ``<instance object: PROBLEM>``, not a problem's name."""
    from debatekit.runs.spec import described

    if run.size is not None and run.size != given.size:
        raise UserError(f"--size {run.size}: the instance given has size {given.size}")
    return replace(given, problem=described(given, "instance"))


def play(
    ready: Prepared,
    progress: Callable[[int], None] | None = None,
    *,
    record: Path | None = None,
    resume: bool = False,
) -> RunResult:
    """Play a prepared run; its result's ``to_json()`` is what ``run --json`` prints: ``extra``
    holds the parameters in effect (``params``) and, when a model played or judged, this run's
    usage of it by role (``model_usage``). A resume that cannot be done, or planned constants the
    planner cannot certify at this size, are ``UserError``."""
    from debatekit.analysis.montecarlo import ResumeError
    from debatekit.analysis.montecarlo import run as run_trials
    from debatekit.engine.record import Mismatch
    from debatekit.engine.trust import ReplayError, Unaffordable
    from debatekit.files import FileMistake
    from debatekit.ledger import Role
    from debatekit.protocols.stochastic.rules import Unplannable
    from debatekit.runs.names import generation_of

    run = ready.run
    if ready.models:
        from debatekit.llm.players import usage_json

        models_before = usage_json()
    boundary = {role.value: where.value for role, where in ready.seating.items()}
    generation = None if not run.generation else generation_of(run.generation).to_json()  # type: ignore[union-attr]
    if resume and hasattr(ready.oracles.verifier, "fresh"):  # people: the resumed debates' own questions
        ready.oracles.verifier.fresh = False
    try:
        with contextlib.ExitStack() as pools:
            alice, bob = (_played(ready, role, pools) for role in (Role.ALICE, Role.BOB))
            result = run_trials(ready.spec, ready.instance, alice, bob, run.trials, run.seed, progress,
                                oracles=ready.oracles, record=record, timeout=run.move_timeout,
                                concurrency=run.concurrency, params=ready.params, resume=resume,
                                boundary=boundary, generation=generation, prompts=ready.prompts)  # fmt: skip
    except (ResumeError, ReplayError, Mismatch) as err:
        raise UserError(f"--resume: {err}") from err
    except FileMistake as err:  # a record or journal that is not JSON Lines
        raise UserError(f"--resume: {err}") from err
    except Unplannable as err:  # the certified planner's --constants planned, at a size past its reach
        raise UserError(f"{ready.spec.name} cannot be planned for {run.problem} at --size "
                        f"{ready.instance.size}: {err}; choose a smaller --size") from err  # fmt: skip
    except Unaffordable as err:  # a trusted part asked past its declared limit (B's training, say)
        raise UserError(f"{ready.spec.name} on {run.problem} at --size {ready.instance.size}: {err}") from None
    usage = usage_json(since=models_before) if ready.models else None  # LLM players or a model of the judge
    scored = judges_scored(ready) if ready.models else None
    return replace(
        result,
        params=ready.params,
        boundary=boundary,
        model_usage=usage,
        judge_calibration=scored,
        prompts=ready.prompts,
    )


def judges_scored(ready: Prepared) -> dict[str, Any] | None:
    """Each model of the judge (an oracle, not a player's model) scored against the instance's
    ground truth on the distinct questions it answered whose truth is known (None when none)."""
    from debatekit.analysis.calibration import baseline, calibration
    from debatekit.llm.judge import ModelJudge

    truth = ready.instance.oracle
    scored: dict[str, Any] = {}
    for judge in {id(o): o for o in (ready.oracles.provers, ready.oracles.verifier)}.values():
        if not isinstance(judge, ModelJudge):
            continue
        pairs: dict[Any, tuple[float, float]] = {}
        for query, p in judge.answered:
            try:
                known = truth.probability(query)
            except (ValueError, TypeError):  # not a question the ground truth knows
                known = None
            if known is not None:
                pairs[query] = (p, float(known))
        if pairs:
            model = calibration([p for p, _ in pairs.values()], [y for _, y in pairs.values()])
            chance = baseline([y for _, y in pairs.values()])
            scored[f"llm:{judge.name}"] = {"n": model.n, "brier": model.brier, "baseline_brier": chance.brier,
                                           "worse_than_chance": model.worse_than(chance)}  # fmt: skip
    return scored or None


def _played(ready: Prepared, role: Role, pools: contextlib.ExitStack) -> Strategy:
    """``role``'s strategy as the run plays it: an :class:`Isolated` one through its pool of
    workers (entered on ``pools``, ended with the run), under the run's time and memory limits."""
    from debatekit.engine.isolation import GIB, Limits, Pool
    from debatekit.ledger import Role
    from debatekit.players.base import StrategyError

    chosen = ready.alice if role is Role.ALICE else ready.bob
    if not isinstance(chosen, Isolated):
        return chosen
    limits = Limits(timeout=ready.run.move_timeout, memory=int(ready.run.player_memory * GIB))
    try:
        pool = pools.enter_context(Pool(chosen.path, role, limits))
    except StrategyError as err:
        raise UserError(str(err)) from None
    return replace(pool.strategy, name=chosen.name, shape=chosen.shape)


def writable(path: Path | None, spec: ProtocolSpec, resume: bool = False, overwrite: bool = True) -> Path | None:
    """``--record``'s file, checked before any debate is played (and kept as it is to resume); one
    that exists is refused unless the run resumes it or ``overwrite``."""
    if path is None:
        if resume:
            raise UserError("--resume needs --record FILE.jsonl, the record of the run to resume")
        return None
    if spec.debate is None and spec.batch is None:
        raise UserError(f"--record: {spec.name} keeps no per-debate record")
    if path.exists() and not (resume or overwrite):
        raise UserError(f"--record: {str(path)!r} exists; --resume continues its run, --overwrite replaces it")
    try:
        path.open("a" if resume else "w").close()
    except OSError as err:
        raise UserError(f"--record: cannot write {str(path)!r}: {err.strerror}") from err
    return path
