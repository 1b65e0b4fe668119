"""``debatekit problems`` and ``debatekit players``: what is built in, one line each."""

from __future__ import annotations

from typing import Annotated

import typer

from debatekit.cli.common import emit_json, protocol
from debatekit.ledger import Role
from debatekit.problems import PROBLEMS


def problems(json_out: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False) -> None:
    """List the built-in problems: name, description, protocols."""
    if json_out:
        emit_json(
            {
                "problems": [
                    {
                        "name": p.name,
                        "description": p.description,
                        "protocols": list(p.protocols),
                        "default_size": p.default_size,
                    }
                    for p in PROBLEMS.values()
                ]
            }
        )
        return
    width = max(map(len, PROBLEMS))
    for p in PROBLEMS.values():
        print(f"{p.name:<{width}}  {p.description} [{', '.join(p.protocols)}]")


def players(
    protocol_name: Annotated[str, typer.Argument(metavar="PROTOCOL", help="A protocol name.")],
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """List the built-in strategies of a protocol: ROLE NAME  description."""
    spec = protocol(protocol_name)
    rows = [s for role in (Role.ALICE, Role.BOB) for s in spec.strategies[role].values()]
    if json_out:
        emit_json(
            {
                "protocol": spec.name,
                "players": [{"role": s.role.value, "name": s.name, "description": s.description} for s in rows],
            }
        )
        return
    width = max(len(s.name) for s in rows)
    for s in rows:
        print(f"{s.role.value:<5} {s.name:<{width}}  {s.description}")
