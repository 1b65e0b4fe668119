"""Entry point: builds the Typer app and turns every user mistake into one line and status 2.

Building the app imports only Typer and the command modules' signatures (``options``); each command
imports what it runs when called, so ``debatekit --help`` starts in Typer's time."""

from __future__ import annotations

import os
import sys
import traceback

import typer

from debatekit.cli import (
    calibrate_cmd,
    catalog_cmd,
    demo_cmd,
    dqc_cmd,
    experiment_cmd,
    judge_cmd,
    lipschitz_cmd,
    logs_cmd,
    plan_cmd,
    replay_cmd,
    report_cmd,
    run_cmd,
    show_cmd,
    solve_cmd,
    stability_cmd,
    stackelberg_cmd,
    sweep_cmd,
    training_cmd,
    view_cmd,
)
from debatekit.mistakes import UserError

app = typer.Typer(
    name="debatekit",
    help="Run, measure and solve the debate protocols of AI safety via debate.",
    rich_markup_mode=None,
)


def example(*lines: str) -> str:
    """A command's ``--help`` epilog: its examples, kept as written (click's ``\\b``)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


COMMANDS = (
    ("demo", demo_cmd.demo, example("debatekit demo --quick", "debatekit demo --json --log-dir runs/")),
    ("run", run_cmd.run, example(
        "debatekit run cross-exam --problem majority --bob point-random --trials 200",
        "debatekit run stochastic --problem noisy-majority --record r.jsonl",
        "debatekit run cross-exam --problem caffeine --alice llm:local/smollm2",
        "debatekit run cross-exam --problem caffeine --verifier-oracle people \\",
        "    --judge-db judges.sqlite --concurrency 8")),
    ("solve", solve_cmd.solve, example("debatekit solve cross-exam --problem parity --size 4",
                                       "debatekit solve kw --problem majority --size 3 --all-inputs")),
    ("problems", catalog_cmd.problems, example("debatekit problems", "debatekit problems --params")),
    ("players", catalog_cmd.players, example("debatekit players stochastic")),
    ("calibrate", calibrate_cmd.calibrate, example("debatekit calibrate --judge llm:local/smollm2",
                                                   "debatekit calibrate --judge llm:local/smollm2 --dataset claims "
                                                   "--plot reliability.png")),
    ("plan", plan_cmd.plan, example("debatekit plan --K 2 --T 100", "debatekit plan --K 2 --T 100 --frontier")),
    ("lipschitz", lipschitz_cmd.lipschitz, example("debatekit lipschitz --problem xor-of-judgements --size 8")),
    ("dqc", dqc_cmd.dqc, example("debatekit dqc --n 3", "debatekit dqc --n 4 --function majority")),
    ("stability", stability_cmd.stability, example("debatekit stability --problem evidence-majority")),
    ("stackelberg", stackelberg_cmd.stackelberg, example("debatekit stackelberg --epsilon 0.05 --bob omniscient")),
    ("replay", replay_cmd.replay_file, example("debatekit replay r.jsonl")),
    ("show", show_cmd.show, example("debatekit show r.jsonl --debate 2")),
    ("logs", logs_cmd.logs, example("debatekit logs", "debatekit logs --log-dir runs/")),
    ("sweep", sweep_cmd.sweep, example("debatekit sweep examples/sweep.toml --workers 2",
                                       "debatekit sweep examples/sweep.toml --backend ray --address auto",
                                       "debatekit sweep grid.toml --shard 0/4 -P q=4",
                                       "debatekit sweep --set protocol=cross-exam --set problem=parity --set size=8,16",
                                       )),
    ("report", report_cmd.report, example("debatekit report debatekit-logs/",
                                          "debatekit report debatekit-sweeps/sweep --out report/")),
    ("training", training_cmd.training, example("debatekit training r.jsonl --out debates.jsonl",
                                                "debatekit training runs/*.jsonl --out debates.parquet")),
    ("view", view_cmd.view, example("debatekit view r.jsonl", "debatekit view debatekit-logs/ --port 8100 --no-open",
                                    "debatekit view debatekit-sweeps/sweep")),
)  # fmt: skip
for name, command, epilog in COMMANDS:
    app.command(name, epilog=epilog)(command)
app.add_typer(judge_cmd.app, name="judge")
app.add_typer(experiment_cmd.app, name="experiment")


def _print_version(asked: bool) -> None:
    if asked:
        from debatekit.experiments.logs import version

        print(f"debatekit {version()}")
        raise typer.Exit(0)


_debugging = False


def _debug(on: bool) -> None:
    """``--debug``'s switch (also for the players' errors, :func:`debug_players`), off again when
    ``main`` returns."""
    global _debugging
    if on or _debugging:
        from debatekit.engine.play import debug_players

        debug_players(on)
    _debugging = on


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", is_eager=True, expose_value=False, callback=_print_version, help="Print the version."
    ),
    debug: bool = typer.Option(
        False,
        "--debug",
        envvar="DEBATEKIT_DEBUG",
        expose_value=False,
        callback=_debug,
        help="Let an error in a player's own code (a user's strategy) through with its traceback instead of "
        "forfeiting, and show internal errors' tracebacks.",
    ),
) -> None:
    """Run, measure and solve the debate protocols of AI safety via debate."""


PENDING = 75
"""The exit status of a run stopped because the verifier's model could not answer (sysexits'
EX_TEMPFAIL: try again later, with ``--resume``)."""


def main(argv: list[str] | None = None) -> int:
    """Run the command line; 0 on success, 2 on a usage error, 75 when a model could not be
    consulted (:data:`PENDING`), 130 or 143 when SIGINT or SIGTERM stopped it
    (:mod:`debatekit.engine.interrupts`), 1 on anything else (an internal error: one line naming
    the place, :mod:`debatekit.engine.trust`; ``--debug`` for the traceback)."""
    from debatekit.engine.interrupts import Interrupted, interruptible
    from debatekit.engine.trust import InternalError, Unaffordable, error_text, place_of

    command = typer.main.get_command(app)
    argv = sys.argv[1:] if argv is None else argv
    logs_cmd.command_line.set(tuple(argv))
    try:
        with interruptible():
            code = command.main(args=argv or ["--help"], prog_name="debatekit", standalone_mode=False)
    except UserError as err:
        return _usage_error(str(err))
    except typer.TyperException as err:  # Typer's parsing errors: UsageError, BadParameter, ...
        if err.exit_code == 2:
            return _usage_error(err.format_message())
        print(f"debatekit: error: {err.format_message()}", file=sys.stderr)
        return err.exit_code
    except typer.Exit as done:
        return done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("debatekit: interrupted", file=sys.stderr)
        return 130
    except Interrupted as stop:
        print(f"debatekit: interrupted ({stop})", file=sys.stderr)
        return stop.exit_code
    except Exception as err:
        if _debugging:
            raise
        print(f"debatekit: internal error in {place_of(err)}: {error_text(err)} (run with --debug for a traceback)",
              file=sys.stderr)  # fmt: skip
        return 1
    except BaseException as err:
        from debatekit.engine.play import LetThrough, SeatingExit
        from debatekit.oracle import Pending, Unanswered

        if isinstance(err, InternalError):
            if _debugging:
                traceback.print_exception(err.error)
            print(f"debatekit: {err} (run with --debug for a traceback)", file=sys.stderr)
            return 1
        if isinstance(err, Pending):  # the verifier's oracle failed: the debate stays in the journal
            if err.source == "people":  # its question was closed: resuming would find it closed again
                print(f"debatekit: {err.reason}; the debate is pending, not decided", file=sys.stderr)
                return PENDING
            print(f"debatekit: the verifier's model failed: {err}; the debate is pending, not decided "
                  "(with --record, rerun with --resume to continue it)", file=sys.stderr)  # fmt: skip
            return PENDING
        if isinstance(err, Unanswered):  # a model no debate could be left undecided for
            print(f"debatekit: a model could not be consulted: {err}", file=sys.stderr)
            return PENDING
        if isinstance(err, SeatingExit | Unaffordable):
            return _usage_error(str(err))
        if not isinstance(err, LetThrough):
            raise
        traceback.print_exception(err.__cause__ or err)
        print(f"debatekit: a player's code failed (--debug): {err}", file=sys.stderr)
        return 1
    finally:
        _debug(False)
    return code if isinstance(code, int) else 0


def _usage_error(message: str) -> int:
    print(f"debatekit: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def entry() -> None:
    code = main()
    if code in (130, 143):  # stopped by a signal: what finished is written; abandon what is in flight
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # without waiting for threads still running an abandoned move
    sys.exit(code)
