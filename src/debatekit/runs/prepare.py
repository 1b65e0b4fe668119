"""A :class:`~debatekit.runs.spec.RunSpec` resolved once into the objects that play it
(:class:`Prepared`: the protocol with its parameters bound, the instance, the strategies, the
oracles by role) and played; shared by ``debatekit run``, :func:`debatekit.run` and a sweep's cells."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from debatekit.mistakes import UserError
from debatekit.runs.spec import MAX_TRIALS, RunSpec, Truth, in_flight, positive, time_limit

if TYPE_CHECKING:
    from debatekit.analysis.montecarlo import Oracles, RunResult
    from debatekit.players.base import Strategy
    from debatekit.problems import Instance
    from debatekit.protocols.spec import ProtocolSpec


@dataclass(frozen=True)
class Prepared:
    """A run resolved and checked: ``run`` is the run as played, every name resolved (the
    protocol's and problem's names, the size, the parameters in effect, the strategies' names,
    objects as their descriptions), the form logs and ``--json`` write; the protocol with its
    parameters, the instance, the strategies, the oracles routed by role, the parameters in
    effect, and whether a model plays or judges."""

    run: RunSpec
    spec: ProtocolSpec
    instance: Instance
    alice: Strategy
    bob: Strategy
    oracles: Oracles
    params: dict[str, Any]
    models: bool

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
        instance,
        model_spec,
        oracles,
        params_json,
        player,
        problem_for,
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
    if run.seed < 0:
        raise UserError(f"--seed must be at least 0, got {run.seed}")
    if given is not None:
        case = _own(given, run)
    else:
        assert found is not None
        case = instance(found, run.size, run.truth, run.seed, problem_values)
    players = player(spec, Role.ALICE, run.alice), player(spec, Role.BOB, run.bob)
    for chosen in players:
        if chosen.refuses is not None and (why := chosen.refuses(case)):
            raise UserError(f"{chosen.role.value} strategy {chosen.name!r} cannot play this instance: {why}")
    positive(run.answers_per_judge, "--answers-per-judge")
    routed = oracles(case, run.oracle, run.prover_oracle, run.verifier_oracle, run.judge_db, run.answers_per_judge)
    named = [p for p in (run.alice, run.bob, run.oracle, run.prover_oracle, run.verifier_oracle) if isinstance(p, str)]
    models = any(model_spec(text) is not None for text in named)
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
    return Prepared(played, spec, case, *players, routed, params, models)


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
    from debatekit.engine.record import Mismatch, ReplayError
    from debatekit.engine.trust import Unaffordable
    from debatekit.files import FileMistake
    from debatekit.protocols.stochastic.rules import Unplannable

    run = ready.run
    if ready.models:
        from debatekit.llm.players import usage_json

        models_before = usage_json()
    try:
        result = run_trials(ready.spec, ready.instance, ready.alice, ready.bob, run.trials, run.seed, progress,
                            oracles=ready.oracles, record=record, timeout=run.move_timeout,
                            concurrency=run.concurrency, params=ready.params, resume=resume)  # fmt: skip
    except (ResumeError, ReplayError, Mismatch) as err:
        raise UserError(f"--resume: {err}") from err
    except FileMistake as err:  # a record or journal that is not JSON Lines
        raise UserError(f"--resume: {err}") from err
    except Unplannable as err:  # the certified planner's --constants planned, at a size past its reach
        raise UserError(f"{ready.spec.name} cannot be planned for {run.problem} at --size "
                        f"{ready.instance.size}: {err}; choose a smaller --size") from err  # fmt: skip
    except Unaffordable as err:  # a trusted part asked past its declared limit (B's training, say)
        raise UserError(f"{ready.spec.name} on {run.problem} at --size {ready.instance.size}: {err}") from None
    extra = result.extra | {"params": ready.params}
    if ready.models:  # LLM players or a model of the judge played: this run's usage by role
        extra["model_usage"] = usage_json(since=models_before)
    return replace(result, extra=extra)


def writable(path: Path | None, spec: ProtocolSpec, resume: bool = False, overwrite: bool = True) -> Path | None:
    """``--record``'s file, checked before any debate is played (and kept as it is to resume); one
    that exists is refused unless the run resumes it or ``overwrite``."""
    if path is None:
        if resume:
            raise UserError("--resume needs --record FILE.jsonl, the record of the run to resume")
        return None
    if spec.debate is None and spec.replay is None:
        raise UserError(f"--record: {spec.name} keeps no per-debate record")
    if path.exists() and not (resume or overwrite):
        raise UserError(f"--record: {str(path)!r} exists; --resume continues its run, --overwrite replaces it")
    try:
        path.open("a" if resume else "w").close()
    except OSError as err:
        raise UserError(f"--record: cannot write {str(path)!r}: {err.strerror}") from err
    return path
