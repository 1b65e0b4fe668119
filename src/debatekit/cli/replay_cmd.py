"""``debatekit replay``: check a record's chain and run the verifier again on every recorded debate.

A record (:mod:`debatekit.engine.record`) starts with a header that fixes the run; every line
carries a hash chained to the one before. Replay checks the chain, rebuilds the instance from the
header (a plan file from ``--problem FILE`` or the path the header keeps, its bytes checked by the
instance's fingerprint), checks each line belongs to that run, and replays it: every recorded
verifier answer is checked against the oracle where it is known. A record that fails is reported
with its line and the reason (exit 1); a file that is not a record is one line (exit 2). The chain
detects tampering and accidents; it is not a signature.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from debatekit.mistakes import UserError
from debatekit.runs.spec import Truth

RUN_FIELDS = ("protocol", "constants", "problem", "size", "truth", "seed", "params", "instance", "alice", "bob")
"""The fields every debate line shares with its header."""


def replay_file(
    path: Annotated[Path, typer.Argument(metavar="FILE.jsonl", help="A file written by `run --record`.")],
    plan_file: Annotated[
        Path | None,
        typer.Option("--problem", metavar="FILE", help="The plan file the run read (default: the header's path)."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Replay each record: exit 0 only if the chain holds and every verdict, forfeit, verifier
    count and oracle answer reproduces."""
    from debatekit.cli.common import emit_json, stdout
    from debatekit.engine.record import Mismatch, chain_lines, replay
    from debatekit.engine.trust import ReplayError
    from debatekit.files import FileMistake

    if not path.is_file():
        raise UserError(f"no record file {str(path)!r}")
    failed: list[dict[str, Any]] = []
    count = undecided = 0
    try:
        for number, value, _, _ in chain_lines(path):
            if number == 1:
                header = value["header"]
                spec, case = rebuilt(header, plan_file, path)
                continue
            count += 1
            debate = value.get("debate")
            differ = [key for key in RUN_FIELDS if value.get(key) != header.get(key)]
            if differ:
                why = f"{', '.join(differ)}: not the header's"
                failed.append({"line": number, "debate": debate, "differences": [why]})
                continue
            try:
                result = replay(value, spec, case)
            except (ReplayError, KeyError, TypeError, ValueError, AttributeError) as err:
                failed.append({"line": number, "debate": debate, "differences": [f"{type(err).__name__}: {err}"]})
                continue
            undecided += result.undecided
            if not result.reproduced:
                failed.append({"line": number, "debate": debate, "differences": list(result.differences)})
    except FileMistake as err:
        raise UserError(str(err)) from None
    except Mismatch as err:
        failed.append({"line": None, "debate": None, "differences": [str(err)]})
    if json_out:
        reproduced = count - len([f for f in failed if f["line"]])
        emit_json({"records": count, "reproduced": reproduced, "undecided": undecided, "failed": failed})
    else:
        of_them = f" ({undecided} undecided)" if undecided else ""
        stdout.print(f"{count - len([f for f in failed if f['line']])} of {count} debates reproduce{of_them}")
        for f in failed:
            where = f"line {f['line']} (debate {f['debate']}): " if f["line"] else ""
            stdout.print(where + "; ".join(f["differences"]), markup=False)
    if failed:
        raise typer.Exit(1)


def rebuilt(header: dict[str, Any], problem: Path | None, path: Path) -> tuple[Any, Any]:
    """The protocol and instance a record's header fixes: the plan file ``problem``, else the one the
    header names if it is there, else a built-in problem by name. A verifier that asked another oracle than the
    instance's (a person, a model) has its answers bounded only, through the oracle's sample-only view."""
    from debatekit.oracle import SampleOnly
    from debatekit.problems.dataset import item_of
    from debatekit.problems.registry import PROBLEMS
    from debatekit.runs.names import configure, instance, problem_for, protocol, with_constants
    from debatekit.runs.spec import constants_named

    try:
        played = protocol(header["protocol"])
        name, file = header["problem"], header.get("file")
        if problem is not None:
            name = str(problem)
        elif isinstance(file, str) and Path(file).is_file():
            name = file
        elif name not in PROBLEMS and item_of(name) is None:  # a dataset's item: read again by problem_for
            raise UserError(f"{path}:1: the plan file {file!r} the run read is not there; give --problem FILE")
        found = problem_for(name, played)
        assignments = [f"{key}={value}" for key, value in header["params"].items()]
        constants = constants_named(header.get("constants"))
        spec, values = configure(played, found, with_constants(played, assignments, constants))
        case = instance(found, header["size"], Truth(header["truth"]), header["seed"], values)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise UserError(f"{path}:1: not a record's header ({type(err).__name__}: {err})") from None
    if header.get("oracle") != "instance":
        case = replace(case, oracle=SampleOnly(case.oracle))
    return spec, case
