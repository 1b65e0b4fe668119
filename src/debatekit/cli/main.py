"""Entry point: builds the Typer app and turns every user mistake into one line and status 2.

Building the app imports only Typer and the command modules' signatures (``options``); each command
imports what it runs when called, so ``debatekit --help`` starts in Typer's time."""

from __future__ import annotations

import sys
import traceback

import typer

from debatekit.cli import (
    catalog_cmd,
    demo_cmd,
    dqc_cmd,
    judge_cmd,
    lipschitz_cmd,
    logs_cmd,
    plan_cmd,
    replay_cmd,
    run_cmd,
    show_cmd,
    solve_cmd,
    stability_cmd,
    sweep_cmd,
)
from debatekit.cli.options import UserError

app = typer.Typer(
    name="debatekit",
    help="Run, measure and solve the debate protocols of AI safety via debate.",
    add_completion=False,
    rich_markup_mode=None,
)
app.command("demo")(demo_cmd.demo)
app.command("run")(run_cmd.run)
app.command("solve")(solve_cmd.solve)
app.command("problems")(catalog_cmd.problems)
app.command("players")(catalog_cmd.players)
app.command("plan")(plan_cmd.plan)
app.command("lipschitz")(lipschitz_cmd.lipschitz)
app.command("dqc")(dqc_cmd.dqc)
app.command("stability")(stability_cmd.stability)
app.command("replay")(replay_cmd.replay_file)
app.command("show")(show_cmd.show)
app.add_typer(judge_cmd.app, name="judge")
app.command("logs")(logs_cmd.logs)
app.command("sweep")(sweep_cmd.sweep)


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


def main(argv: list[str] | None = None) -> int:
    """Run the command line; 0 on success, 2 on a usage error, 1 on anything else."""
    command = typer.main.get_command(app)
    argv = sys.argv[1:] if argv is None else argv
    logs_cmd.command_line.set(tuple(argv))
    try:
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
    except Exception as err:
        if _debugging:
            raise
        print(
            f"debatekit: internal error: {type(err).__name__}: {err} (run with --debug for a traceback)",
            file=sys.stderr,
        )
        return 1
    except BaseException as err:
        from debatekit.engine.play import LetThrough, SeatingExit

        if isinstance(err, SeatingExit):
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
    sys.exit(main())
