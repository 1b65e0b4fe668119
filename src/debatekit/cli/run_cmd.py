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
    ConstantsOption,
    GenerationOption,
    JsonOption,
    ParamOption,
    ProblemOption,
    ProtocolArgument,
    RunTruthOption,
    SeedOption,
    SizeOption,
)
from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.mistakes import UserError
from debatekit.runs.spec import DEFAULT_PLAYER_MEMORY, RunSpec, judge_db_of

if TYPE_CHECKING:
    from rich.table import Table

    from debatekit.analysis.montecarlo import RunResult
    from debatekit.runs.dataset import DatasetResult


def run(
    protocol_name: ProtocolArgument,
    problem: ProblemOption,
    size: SizeOption = None,
    truth: RunTruthOption = None,
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
        str | None,
        typer.Option(
            "--judge-db",
            metavar="FILE.sqlite|postgresql://...",
            help="The judges' database, for people (`debatekit judge`): a SQLite file or a PostgreSQL URL.",
        ),
    ] = None,
    reuse_answers: Annotated[
        bool,
        typer.Option(
            "--reuse-answers",
            help="People: a rerun finds the questions an earlier run of it asked, with their answers (default: "
            "ask fresh questions; --resume always continues its own).",
        ),
    ] = False,
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
    trust_players: Annotated[
        bool,
        typer.Option(
            "--trust-players",
            help="Play a user's module:attr strategy inline, not in a worker process: to debug it with a debugger. "
            "The boundary is then off, and the result and record say so.",
        ),
    ] = False,
    player_memory: Annotated[
        float,
        typer.Option("--player-memory", metavar="GIB", help="Address space of a user's strategy's worker process."),
    ] = DEFAULT_PLAYER_MEMORY,
    generation: GenerationOption = None,
    prompts: Annotated[
        Path | None,
        typer.Option(
            "--prompts",
            metavar="DIR",
            help="Prompt files for the model roles, each replacing the packaged one: judge.txt, alice-honest.txt, "
            "alice-liar.txt, bob-honest.txt, bob-liar.txt ($question, optionally $context; a player without its own "
            "file reads judge.txt). The record's header names each file read and its SHA-256.",
        ),
    ] = None,
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
    from debatekit.cli.common import conclude, stdout
    from debatekit.cli.logs_cmd import start_log
    from debatekit.progress import progress
    from debatekit.runs.names import generation_file
    from debatekit.runs.prepare import play, prepare, writable

    asked = RunSpec(
        protocol=protocol_name,
        problem=problem,
        size=size,
        truth=truth,
        alice=alice,
        bob=bob,
        constants=constants,
        params=tuple(_assigned(param)),
        seed=seed,
        trials=trials,
        oracle=oracle,
        prover_oracle=prover_oracle,
        verifier_oracle=verifier_oracle,
        judge_db=judge_db_of(judge_db),
        answers_per_judge=answers_per_judge,
        reuse_answers=reuse_answers,
        move_timeout=move_timeout,
        concurrency=concurrency,
        trust_players=trust_players,
        player_memory=player_memory,
        generation=() if generation is None else generation_file(generation),
        prompts=prompts,
    )
    from debatekit.runs.dataset import is_dataset_run

    if is_dataset_run(asked):
        if record is not None or resume or log_records:
            raise UserError(f"{problem} is a dataset: run keeps no records of it (each item is a run of its own); "
                            "sweep it to keep each item's records (debatekit sweep), or name one item, "
                            f"{problem}#ID")  # fmt: skip
        _dataset(asked, json_out, no_log, log_dir)
        return
    ready = prepare(asked)
    spec = ready.spec
    if ready.people is not None:
        panel = ready.people
        print(f"people: R = {panel.needed} answers to the verifier's question, from {panel.judges} judges (at most "
              f"{panel.most}); expected judgements per debate with honest players <= {panel.expected:.3g}",
              file=sys.stderr)  # fmt: skip
    record = writable(record, spec, resume, overwrite)
    log = None
    if not no_log:
        log = start_log(log_dir, {"command": "run"} | ready.run.to_json() | {"resume": resume}, record, log_records)
        if record is None and log_records:
            record = writable(log.records, spec)
    from debatekit.engine.interrupts import Interrupted

    started, stopped = time.perf_counter(), None
    with progress(trials, ready.title) as advance:
        try:
            result = play(ready, advance, record=record, resume=resume)
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
    reused = getattr(ready.oracles.verifier, "reused", None)
    if reused is not None and reuse_answers:
        print(f"people: {reused} answers from an earlier run of this one were reused (--reuse-answers)",
              file=sys.stderr)  # fmt: skip

    def show() -> None:
        if result is not None:  # a run stopped before any debate finished has no table
            stdout.print(table(result, ready.params))

    conclude(summary, log, started, json_out, show, stopped)


def _dataset(asked: RunSpec, json_out: bool, no_log: bool, log_dir: Path) -> None:
    """``run`` over a dataset: each item played, a line each and the pooled rates (:mod:`debatekit.runs.dataset`)."""
    from debatekit.cli.common import conclude, stdout
    from debatekit.cli.logs_cmd import start_log
    from debatekit.engine.interrupts import Interrupted
    from debatekit.progress import progress
    from debatekit.runs.dataset import debates, item_runs, played

    runs = item_runs(asked)
    log = None if no_log else start_log(log_dir, {"command": "run"} | asked.to_json(), None, False)
    started, stopped = time.perf_counter(), None
    with progress(debates(runs), f"{asked.protocol} on {asked.problem}") as advance:
        try:
            result = played(asked, runs, advance)
        except Interrupted as stop:
            stopped, result = stop, stop.result
    for item in result.played:
        for role, reason in item.result.forfeit_reasons.items():  # type: ignore[union-attr]
            print(f"note: {item.id}: {role} forfeited {item.result.forfeits[role]} debates, e.g. {reason}",  # type: ignore[union-attr]
                  file=sys.stderr)  # fmt: skip
    conclude(result.to_json(), log, started, json_out, lambda: stdout.print(dataset_table(result)), stopped)


def dataset_table(result: DatasetResult) -> Table:
    """A run over a dataset: a line an item (accept rate with its interval, the promise on its side,
    the verifier's most queries), the pooled rates in the caption."""
    from rich.table import Table

    run = result.run
    done = sum(item.result is None or item.result.trials_asked is None for item in result.items)
    stopped = f"INTERRUPTED after {done} of {result.asked} items: " if done < result.asked else ""
    out = Table(title=f"{stopped}{run.protocol} on the dataset {run.problem}: alice {run.alice} vs bob {run.bob}, "
                      f"{run.trials} debates an item")  # fmt: skip
    paid = any(item.result is not None and item.result.payoffs is not None for item in result.items)
    columns = [("item", "left"), ("truth", "left"), ("accept rate", "right"), ("theorem", "right")]
    columns += [("A's payoff / bound", "right")] if paid else []
    for name, justify in (*columns, ("holds", "left"), ("verifier queries (max)", "right")):
        out.add_column(name, justify=justify)  # type: ignore[arg-type]
    for item in result.items:
        truth = "yes" if item.truth else "no"
        if item.result is None:
            out.add_row(item.id, truth, "skipped", "", *([""] if paid else []), item.skipped, "")
            continue
        r, g = item.result, item.result.guarantee
        lo, hi = r.accept_ci
        promise = f">= {g.completeness:g}" if item.truth else f"<= {g.soundness:g}"
        payoff = [] if not paid else [_payoff(r)]
        within = {None: "no promise", True: "yes", False: "NO"}[item.promised]
        out.add_row(item.id, truth, f"{r.accept_rate:.3f} [{lo:.3f}, {hi:.3f}]", promise, *payoff, within,
                    str(r.verifier_queries_max))  # fmt: skip
    lines = []
    for name, rate in result.pooled().items():
        said = {"accept_yes": "accept rate, truth yes", "accept_no": "accept rate, truth no",
                "correct": "verdict = truth"}[name]  # fmt: skip
        if rate.ci is not None:
            lo, hi = rate.ci
            lines.append(f"{said}: {rate.rate:.3f} [{lo:.3f}, {hi:.3f}] ({rate.k} of {rate.n} debates)")
    judged = [item.promised for item in result.played if item.promised is not None]
    lines.append(f"items whose promise holds: {sum(judged)} of the {len(judged)} the theorem makes one for")
    out.caption = "pooled over the items played: " + "; ".join(lines)
    return out


def _payoff(result: RunResult) -> str:
    """A's mean payoff and the bound the theorem puts on it (none where it promises none)."""
    from debatekit.protocols.payoffs import BoundKind

    payoffs = result.payoffs
    if payoffs is None:
        return ""
    bound = payoffs.conclusions.bound
    said = f"{'>=' if bound.kind is BoundKind.COMPLETENESS else '<='} {bound.value:.3g}"
    return f"{payoffs.mean:.3g} / {said if payoffs.conclusions.promised and bound.covers_bob else 'none'}"


def _assigned(assignments: list[str] | None) -> list[tuple[str, str]]:
    """``-P NAME=VALUE`` as (name, value) pairs, in order (:func:`debatekit.params.bind` checks them)."""
    from debatekit.params import ParamError, split

    try:
        return [split(text) for text in assignments or ()]
    except ParamError as err:
        raise UserError(str(err)) from err


def table(result: RunResult, params: dict[str, float]) -> Table:
    from rich.table import Table

    from debatekit.engine.isolation import Seating
    from debatekit.protocols.payoffs import BoundKind

    g = result.guarantee
    asked = result.trials_asked
    stopped = f"INTERRUPTED after {result.trials} of {asked} debates: " if asked is not None else ""
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
    payoffs = result.payoffs
    if payoffs is not None:  # protocols with rewards: A's mean payoff against the theorem's bound
        low, high = payoffs.ci
        bound = payoffs.conclusions.bound
        promised = f"{'>=' if bound.kind is BoundKind.COMPLETENESS else '<='} {bound.value:.4g}"
        if not bound.covers_bob:  # the lemma says nothing against these players
            promised = f"none ({promised} needs another B)"
        elif not payoffs.conclusions.promised:  # unstable, or vacuous: the note says why
            promised = f"none ({promised} not promised)"
        out.add_row("A's payoff (mean, 95% CI)", f"{payoffs.mean:.4g} [{low:.4g}, {high:.4g}]", promised)
    played = payoffs.conclusions.played if payoffs else {}
    used = {name: value for name, value in played.items() if name in params}  # by depth
    settings = ", ".join(
        f"{name}={value}" if isinstance(value, str) else f"{name}={value:g}" for name, value in (params | used).items()
    )
    note = payoffs.conclusions.note if payoffs else None
    inline = [f"{role}: {where}" for role, where in result.boundary.items() if Seating(where).off]
    worse = "; ".join(
        f"{name} judged worse than chance: Brier {s['brier']:.3f} on the {s['n']} questions it answered "
        f"(always 0.5: {s['baseline_brier']:.3f})"
        for name, s in (result.judge_calibration or {}).items()
        if s["worse_than_chance"]
    )
    out.caption = (g.statement + (f"\n{note}" if note else "") + (f"\nparameters: {settings}" if settings else "")
                   + "".join(f"\n{seat}" for seat in inline) + (f"\n{worse}" if worse else ""))  # fmt: skip
    return out
