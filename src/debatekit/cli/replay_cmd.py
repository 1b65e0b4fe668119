"""``debatekit replay``: run the verifier again on every recorded debate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debatekit.cli.options import Truth, UserError


def replay_file(
    path: Annotated[Path, typer.Argument(metavar="FILE.jsonl", help="A file written by `run --record`.")],
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Replay each record: exit 0 only if every verdict, forfeit and verifier count reproduces."""
    from debatekit.cli.common import configure, emit_json, instance, problem_for, protocol, stdout
    from debatekit.engine.record import ReplayError, read_records, replay

    if not path.is_file():
        raise UserError(f"no record file {str(path)!r}")
    results, instances = [], {}
    try:
        for record in read_records(path):
            assignments = [f"{name}={value}" for name, value in record["params"].items()]
            key = (record["protocol"], record["problem"], record["size"], record["truth"], record["seed"], *assignments)
            if key not in instances:
                played = protocol(record["protocol"])
                if record.get("constants") and played.variant is not None:
                    played = played.variant(record["constants"])
                found = problem_for(record["problem"], played)
                spec, problem_values = configure(played, found, assignments)
                case = instance(found, record["size"], Truth(record["truth"]), record["seed"], problem_values)
                instances[key] = spec, case
            results.append(replay(record, *instances[key]))
    except (ReplayError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise UserError(f"{path}: not a debate record ({type(err).__name__}: {err})") from err
    failed = [r for r in results if not r.reproduced]
    if json_out:
        emit_json({"records": len(results), "reproduced": len(results) - len(failed),
                   "failed": [{"debate": r.debate, "differences": list(r.differences)} for r in failed]})
    else:
        stdout.print(f"{len(results) - len(failed)} of {len(results)} debates reproduce")
        for r in failed:
            stdout.print(f"debate {r.debate}: " + "; ".join(r.differences))
    if failed:
        raise typer.Exit(1)
