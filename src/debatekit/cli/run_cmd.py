"""``debatekit run``: many debates of one protocol on one instance."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.logs_cmd import LogDirOption, LogRecordsOption, NoLogOption
from debatekit.cli.options import (
    STRATEGY_HELP,
    Constants,
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

if TYPE_CHECKING:
    from rich.table import Table

    from debatekit.analysis.montecarlo import RunResult

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
    constants: Annotated[
        Constants | None, typer.Option("--constants", help="Stochastic debate: planned (default), lean or paper.")
    ] = None,
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
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
    log_records: LogRecordsOption = False,
) -> None:
    """Run TRIALS debates and report the accept rate, honest win rate and the ledger; the run is
    logged in a new folder under --log-dir (see `debatekit logs`)."""
    from debatekit.analysis.montecarlo import ResumeError
    from debatekit.analysis.montecarlo import run as run_trials
    from debatekit.cli.common import (
        configure,
        emit_json,
        instance,
        oracles,
        params_json,
        positive,
        problem_for,
        progress,
        protocol,
        stdout,
        strategy,
        with_constants,
        writable,
    )
    from debatekit.cli.logs_cmd import start_log
    from debatekit.engine.record import ReplayError
    from debatekit.ledger import Role
    from debatekit.protocols.stochastic import Unplannable

    spec = with_constants(protocol(protocol_name), constants)
    found = problem_for(problem, spec)
    spec, problem_values = configure(spec, found, param)
    if positive(trials, "--trials") > MAX_TRIALS:
        raise UserError(f"--trials is at most {MAX_TRIALS:.0e} in one run, got {trials}; spread more over seeds "
                        "in a sweep (debatekit sweep)")  # fmt: skip
    positive(concurrency, "--concurrency")
    if not move_timeout > 0:
        raise UserError(f"--move-timeout must be positive, got {move_timeout:g}")
    case = instance(found, size, truth, seed, problem_values)
    players = strategy(spec, Role.ALICE, alice), strategy(spec, Role.BOB, bob)
    for chosen in players:
        if chosen.refuses is not None and (why := chosen.refuses(case)):
            raise UserError(f"{chosen.role.value} strategy {chosen.name!r} cannot play this instance: {why}")
    positive(answers_per_judge, "--answers-per-judge")
    chosen = oracles(case, oracle, prover_oracle, verifier_oracle, judge_db, answers_per_judge)
    record = writable(record, spec, resume)
    log = None
    if not no_log:
        config = {
            "command": "run", "protocol": spec.name, "problem": found.name, "size": case.size, "truth": truth.value,
            "alice": alice, "bob": bob, "trials": trials, "seed": seed, "constants": spec.constants,
            "oracles": {"oracle": oracle, "prover_oracle": prover_oracle, "verifier_oracle": verifier_oracle},
            "params": params_json(spec, problem_values), "move_timeout": move_timeout, "resume": resume,
        }  # fmt: skip
        log = start_log(log_dir, config, record, log_records)
        if record is None and log_records:
            record = writable(log.records, spec)
    models_before = None
    if any(text.startswith("llm:") for text in (alice, bob, oracle, prover_oracle or "", verifier_oracle or "")):
        from debatekit.llm.players import usage_json

        models_before = usage_json()
    started = time.perf_counter()
    try:
        with progress(trials, f"{spec.name} on {found.name}") as advance:
            result = run_trials(
                spec,
                case,
                *players,
                trials,
                seed,
                advance,
                oracles=chosen,
                record=record,
                timeout=move_timeout,
                concurrency=concurrency,
                params=params_json(spec, problem_values),
                resume=resume,
            )
    except (ResumeError, ReplayError) as err:
        raise UserError(f"--resume: {err}") from err
    except Unplannable as err:  # the certified planner's --constants planned, at a size past its reach
        raise UserError(f"{spec.name} cannot be planned for {found.name} at --size {case.size}: {err}; "
                        "choose a smaller --size") from err  # fmt: skip
    for role, reason in result.forfeit_reasons.items():
        print(f"note: {role} forfeited {result.forfeits[role]} of {trials} debates, e.g. {reason}", file=sys.stderr)
    params = params_json(spec, problem_values)
    summary = result.to_json() | {"params": params}
    if models_before is not None:  # LLM players or a model of the judge played: this run's usage by role
        from debatekit.llm.players import usage_json

        summary["model_usage"] = usage_json(since=models_before)
    if log is not None:
        log.finish(summary, time.perf_counter() - started)
    if json_out:
        emit_json(summary)
    else:
        stdout.print(table(result, params))


def table(result: RunResult, params: dict[str, float]) -> Table:
    from rich.table import Table

    g = result.guarantee
    out = Table(
        title=f"{result.protocol} on {result.problem} (size {result.size}, T = {result.T}, "
        f"truth {result.truth}): alice {result.alice} vs bob {result.bob}"
    )
    out.add_column("measure")
    out.add_column("value", justify="right")
    out.add_column("theorem", justify="right")
    lo, hi = result.accept_ci
    promised = f">= {g.completeness:g}" if result.truth == "yes" else f"<= {g.soundness:g}"
    out.add_row("accept rate", f"{result.accept_rate:.3f} [{lo:.3f}, {hi:.3f}]", promised + " (honest side)")
    out.add_row("honest win rate", f"{result.honest_win_rate:.3f}", "")
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
        out.add_row("A's payoff (mean, 95% CI)", f"{extra['payoff_mean']:.4g} [{low:.4g}, {high:.4g}]", promised)
    settings = ", ".join(f"{name}={value:g}" for name, value in params.items())
    note = result.extra.get("payoff_bound_uncovered") or result.extra.get("payoff_bound_note")
    out.caption = g.statement + (f"\n{note}" if note else "") + (f"\nparameters: {settings}" if settings else "")
    return out
