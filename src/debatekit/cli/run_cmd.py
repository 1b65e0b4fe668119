"""``debatekit run``: many debates of one protocol on one instance."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.logs_cmd import LogDirOption, LogRecordsOption, NoLogOption
from debatekit.cli.options import (
    STRATEGY_HELP,
    ConstantsOption,
    JsonOption,
    ParamOption,
    ProblemOption,
    ProtocolArgument,
    SeedOption,
    SizeOption,
    Truth,
    TruthOption,
    UserError,
)
from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.protocols.stochastic.params import Constants

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.table import Table

    from debatekit.analysis.montecarlo import Oracles, RunResult
    from debatekit.ledger import Role
    from debatekit.players.base import Seat, Strategy
    from debatekit.problems import Instance, Problem
    from debatekit.protocols.spec import ProtocolSpec

    Player = str | Strategy | Callable[[Seat], Any]
    """A strategy as ``--alice``/``--bob`` name it, a :class:`Strategy`, or a factory taking a Seat."""

MAX_TRIALS = 10**10
"""The most debates one run plays: a day or more at the batch engines' speed; beyond it a number
is a slip (``1000000000000``), and a larger study is a sweep over seeds."""


def run(
    protocol_name: ProtocolArgument,
    problem: ProblemOption,
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    param: ParamOption = None,
    alice: Annotated[str, typer.Option("--alice", metavar="STRATEGY", help=STRATEGY_HELP)] = "honest",
    bob: Annotated[str, typer.Option("--bob", metavar="STRATEGY", help=STRATEGY_HELP)] = "honest",
    trials: Annotated[int, typer.Option("--trials", help="Number of debates.")] = 200,
    constants: ConstantsOption = None,
    seed: SeedOption = 0,
    oracle: Annotated[
        str,
        typer.Option(
            "--oracle",
            metavar="ORACLE",
            help="Everyone's oracle: builtin; sample (the built-in one, probabilities hidden); people (judges "
            "in a browser, with --judge-db); or llm:PROVIDER/MODEL (a model of the judge).",
        ),
    ] = "builtin",
    prover_oracle: Annotated[
        str | None, typer.Option("--prover-oracle", metavar="ORACLE", help="The provers' oracle (default --oracle).")
    ] = None,
    verifier_oracle: Annotated[
        str | None,
        typer.Option("--verifier-oracle", metavar="ORACLE", help="The verifier's oracle (default --oracle)."),
    ] = None,
    judge_db: Annotated[
        Path | None,
        typer.Option("--judge-db", metavar="FILE.sqlite", help="The judges' database, for people (`debatekit judge`)."),
    ] = None,
    answers_per_judge: Annotated[
        int,
        typer.Option("--answers-per-judge", help="People: the most answers one judge gives to one question's panel."),
    ] = 1,
    record: Annotated[
        Path | None, typer.Option("--record", metavar="FILE.jsonl", help="Write one JSON record per debate.")
    ] = None,
    move_timeout: Annotated[
        float, typer.Option("--move-timeout", metavar="SECONDS", help="A player's time for one move, then it forfeits.")
    ] = DEFAULT_MOVE_TIMEOUT,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Debates in flight at once (slow players).")] = 1,
    resume: Annotated[
        bool, typer.Option("--resume", help="Keep the whole debates --record already holds; play the rest.")
    ] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the --record file if it exists.")] = False,
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
    log_records: LogRecordsOption = False,
) -> None:
    """Run TRIALS debates and report the accept rate, honest win rate and the ledger; the run is
    logged in a new folder under --log-dir (see `debatekit logs`)."""
    from debatekit.cli.common import emit_json, progress, stdout, writable
    from debatekit.cli.logs_cmd import start_log

    ready = prepare(protocol_name, problem, size, truth, param, alice, bob, trials, constants, seed, oracle,
                    prover_oracle, verifier_oracle, judge_db, answers_per_judge, move_timeout, concurrency)  # fmt: skip
    spec, case = ready.spec, ready.instance
    record = writable(record, spec, resume, overwrite)
    log = None
    if not no_log:
        config = {
            "command": "run", "protocol": spec.name, "problem": ready.problem.name, "size": case.size,
            "truth": truth.value, "alice": alice, "bob": bob, "trials": trials, "seed": seed,
            "constants": spec.constants and spec.constants.value,
            "oracles": {"oracle": oracle, "prover_oracle": prover_oracle, "verifier_oracle": verifier_oracle},
            "params": ready.params, "move_timeout": move_timeout, "resume": resume,
        }  # fmt: skip
        log = start_log(log_dir, config, record, log_records)
        if record is None and log_records:
            record = writable(log.records, spec)
    from debatekit.engine.interrupts import Interrupted

    started, stopped = time.perf_counter(), None
    with progress(trials, f"{spec.name} on {ready.problem.name}") as advance:
        try:
            result = play(ready, trials, seed, advance, record=record, timeout=move_timeout, concurrency=concurrency,
                          resume=resume)  # fmt: skip
        except Interrupted as stop:  # a signal: summarise the debates finished, then exit 128 + its number
            stopped, result = stop, stop.result
    if result is None:  # stopped before any debate finished
        summary = {"interrupted": True, "trials": 0, "trials_asked": trials}
    else:
        played = result.trials + result.undecided
        for role, reason in result.forfeit_reasons.items():
            print(f"note: {role} forfeited {result.forfeits[role]} of {played} debates, e.g. {reason}",
                  file=sys.stderr)  # fmt: skip
        if result.undecided:
            print(f"note: {result.undecided} of {played} debates undecided (a player's model could not be "
                  f"consulted), e.g. {result.undecided_reason}; the rates count the {result.trials} decided",
                  file=sys.stderr)  # fmt: skip
        summary = result.to_json()
    if log is not None:
        log.finish(summary, time.perf_counter() - started)
    if json_out:
        emit_json(summary)
    elif result is not None:
        stdout.print(table(result, ready.params))
    if stopped is not None:
        raise stopped


@dataclass(frozen=True)
class Prepared:
    """A run resolved from the names ``run`` takes and checked (shared by ``run``, the Python API
    and a sweep's cells): the protocol with its parameters, the instance, the strategies, the
    oracles routed by role, the parameters in effect, and whether a model plays or judges."""

    spec: ProtocolSpec
    problem: Problem
    instance: Instance
    alice: Strategy
    bob: Strategy
    oracles: Oracles
    params: dict[str, Any]
    models: bool


def prepare(
    protocol_name: str,
    problem: str,
    size: int | None,
    truth: Truth,
    param: list[str] | None,
    alice: Player,
    bob: Player,
    trials: int,
    constants: Constants | None,
    seed: int,
    oracle: str = "builtin",
    prover_oracle: str | None = None,
    verifier_oracle: str | None = None,
    judge_db: Path | None = None,
    answers_per_judge: int = 1,
    move_timeout: float = DEFAULT_MOVE_TIMEOUT,
    concurrency: int = 1,
) -> Prepared:
    """Resolve and check a run as ``debatekit run`` does (``UserError`` for a mistake): names, the
    instance, strategies that can play it, the oracles; nothing is played or written."""
    from debatekit.cli.common import (
        configure,
        in_flight,
        instance,
        model_spec,
        oracles,
        params_json,
        positive,
        problem_for,
        protocol,
        time_limit,
        with_constants,
    )
    from debatekit.ledger import Role

    spec = with_constants(protocol(protocol_name), constants)
    found = problem_for(problem, spec)
    spec, problem_values = configure(spec, found, param)
    if positive(trials, "--trials") > MAX_TRIALS:
        raise UserError(f"--trials is at most {MAX_TRIALS:.0e} in one run, got {trials}; spread more over seeds "
                        "in a sweep (debatekit sweep)")  # fmt: skip
    in_flight(concurrency)
    time_limit(move_timeout)
    if seed < 0:
        raise UserError(f"--seed must be at least 0, got {seed}")
    case = instance(found, size, truth, seed, problem_values)
    players = _player(spec, Role.ALICE, alice), _player(spec, Role.BOB, bob)
    for chosen in players:
        if chosen.refuses is not None and (why := chosen.refuses(case)):
            raise UserError(f"{chosen.role.value} strategy {chosen.name!r} cannot play this instance: {why}")
    positive(answers_per_judge, "--answers-per-judge")
    routed = oracles(case, oracle, prover_oracle, verifier_oracle, judge_db, answers_per_judge)
    named = [p for p in (alice, bob, oracle, prover_oracle, verifier_oracle) if isinstance(p, str)]
    models = any(model_spec(text) is not None for text in named)
    return Prepared(spec, found, case, *players, routed, params_json(spec, problem_values), models)


def play(
    ready: Prepared,
    trials: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
    *,
    record: Path | None = None,
    timeout: float = DEFAULT_MOVE_TIMEOUT,
    concurrency: int = 1,
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

    if ready.models:
        from debatekit.llm.players import usage_json

        models_before = usage_json()
    try:
        result = run_trials(ready.spec, ready.instance, ready.alice, ready.bob, trials, seed, progress,
                            oracles=ready.oracles, record=record, timeout=timeout, concurrency=concurrency,
                            params=ready.params, resume=resume)  # fmt: skip
    except (ResumeError, ReplayError, Mismatch) as err:
        raise UserError(f"--resume: {err}") from err
    except FileMistake as err:  # a record or journal that is not JSON Lines
        raise UserError(f"--resume: {err}") from err
    except Unplannable as err:  # the certified planner's --constants planned, at a size past its reach
        raise UserError(f"{ready.spec.name} cannot be planned for {ready.problem.name} at --size "
                        f"{ready.instance.size}: {err}; choose a smaller --size") from err  # fmt: skip
    except Unaffordable as err:  # a trusted part asked past its declared limit (B's training, say)
        raise UserError(f"{ready.spec.name} on {ready.problem.name} at --size {ready.instance.size}: {err}") from None
    extra = result.extra | {"params": ready.params}
    if ready.models:  # LLM players or a model of the judge played: this run's usage by role
        extra["model_usage"] = usage_json(since=models_before)
    return replace(result, extra=extra)


def _player(spec: ProtocolSpec, role: Role, given: Player) -> Strategy:
    """A strategy as ``--alice``/``--bob`` name it (:func:`debatekit.cli.common.strategy`), or, from
    Python, a :class:`Strategy` of that role or a factory taking a Seat (a class, say)."""
    from debatekit.cli.common import strategy
    from debatekit.players.base import Strategy

    if isinstance(given, str):
        return strategy(spec, role, given)
    if isinstance(given, Strategy):
        if given.role is not role:
            raise UserError(f"{role.value}: strategy {given.name!r} plays {given.role.value}")
        return given
    if not callable(given):
        raise UserError(f"{role.value}: {given!r} is not a strategy (a name, a Strategy or a factory taking a Seat)")
    name = f"{given.__module__}:{getattr(given, '__qualname__', type(given).__name__)}"
    doc = (given.__doc__ or "user strategy").strip().splitlines()[0]
    return Strategy(name, role, doc, given)


def table(result: RunResult, params: dict[str, float]) -> Table:
    from rich.table import Table

    g = result.guarantee
    stopped = f"INTERRUPTED after {result.trials} of {result.extra['trials_asked']} debates: " if (
        result.extra.get("interrupted")) else ""  # fmt: skip
    out = Table(
        title=f"{stopped}{result.protocol} on {result.problem} (size {result.size}, T = {result.T}, "
        f"truth {result.truth}): alice {result.alice} vs bob {result.bob}"
    )
    out.add_column("measure")
    out.add_column("value", justify="right")
    out.add_column("theorem", justify="right")
    lo, hi = result.accept_ci
    promised = f">= {g.completeness:g}" if result.truth == "yes" else f"<= {g.soundness:g}"
    out.add_row("accept rate", f"{result.accept_rate:.3f} [{lo:.3f}, {hi:.3f}]", promised + " (honest side)")
    out.add_row("honest win rate", f"{result.honest_win_rate:.3f}", "")
    if result.undecided:
        out.add_row("undecided (not in the rates)", f"{result.undecided} of {result.undecided + result.trials}", "")
    out.add_row("verifier queries (max)", str(result.verifier_queries_max), f"<= {g.verifier_queries}")
    out.add_row("bits read (max)", str(result.verifier_bits_read_max), f"<= {g.bits_read}")
    out.add_row("alice queries (mean)", f"{result.alice_queries_mean:g}", "")
    out.add_row("bob queries (mean)", f"{result.bob_queries_mean:g}", "")
    if "payoff_mean" in result.extra:  # protocols with rewards: A's mean payoff against the theorem's bound
        extra = result.extra
        low, high = extra["payoff_ci"]
        relation = ">=" if extra.get("payoff_bound_kind") == "completeness" else "<="
        promised = f"{relation} {extra['payoff_bound']:.4g}" if "payoff_bound" in extra else ""
        if promised and extra.get("payoff_bound_uncovered"):  # the lemma says nothing against these players
            promised = f"none ({promised} needs another B)"
        elif promised and extra.get("payoff_bound_promised") is False:  # unstable, or vacuous: note says why
            promised = f"none ({promised} not promised)"
        out.add_row("A's payoff (mean, 95% CI)", f"{extra['payoff_mean']:.4g} [{low:.4g}, {high:.4g}]", promised)
    used = {"delta": result.extra["delta"]} if "delta" in params and "delta" in result.extra else {}  # by depth
    settings = ", ".join(f"{name}={value:g}" for name, value in (params | used).items())
    note = result.extra.get("payoff_bound_uncovered") or result.extra.get("payoff_bound_note")
    out.caption = g.statement + (f"\n{note}" if note else "") + (f"\nparameters: {settings}" if settings else "")
    return out
