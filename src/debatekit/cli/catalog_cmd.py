"""``debatekit problems`` and ``debatekit players``: what is built in, one line each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.options import ProtocolArgument

if TYPE_CHECKING:
    from debatekit.params import Param


def problems(
    params: Annotated[
        bool, typer.Option("--params", help="List every problem's and protocol's parameters (for -P NAME=VALUE).")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """List the built-in problems: name, description, protocols; then the shipped datasets, each
    played item by item (--problem NAME)."""
    from debatekit.cli.common import emit_json
    from debatekit.params import declared
    from debatekit.problems import PROBLEMS
    from debatekit.problems.dataset import SHIPPED, named
    from debatekit.protocols.registry import protocols_of

    if params:
        list_params(json_out)
        return
    datasets = {name: named(name) for name in SHIPPED}
    if json_out:
        emit_json(
            {
                "problems": [
                    {
                        "name": p.name,
                        "description": p.description,
                        "protocols": list(protocols_of(p)),
                        "default_size": p.default_size,
                        "params": [_param_json(q) for q in declared(p.params)],
                    }
                    for p in PROBLEMS.values()
                ],
                "datasets": [
                    {"name": name, "items": len(items), "decomposed": sum(bool(i.steps) for i in items)}
                    for name, items in datasets.items()
                ],
            }
        )
        return
    width = max(map(len, PROBLEMS))
    for p in PROBLEMS.values():
        print(f"{p.name:<{width}}  {p.description} [{', '.join(protocols_of(p))}]")
    for name, items in datasets.items():
        decomposed = sum(bool(i.steps) for i in items)
        print(f"{name:<{width}}  a dataset of {len(items)} claims ({decomposed} decomposed into steps), played item "
              f"by item; one item: {name}#ID (docs/datasets.md)")  # fmt: skip


def players(
    protocol_name: ProtocolArgument,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """List the built-in strategies of a protocol: ROLE NAME  description; and its LLM players'
    names, where it has them (the llm extra)."""
    from debatekit.cli.common import emit_json
    from debatekit.ledger import Role
    from debatekit.runs.names import protocol

    spec = protocol(protocol_name)
    rows = [
        (s.role.value, s.name, s.description) for role in (Role.ALICE, Role.BOB) for s in spec.strategies[role].values()
    ]
    if spec.llm is not None:
        rows += [
            (role.value, f"{kind}:PROVIDER/MODEL", what)
            for role in (Role.ALICE, Role.BOB)
            for kind, what in (
                ("llm", "a model plays the honest strategy, its P[yes] for the judge's (llm-honest: the same)"),
                ("llm-liar", "a model argues the answer its model does not give, the lie where it is most plausible"),
            )
        ]
    if json_out:
        emit_json({"protocol": spec.name, "players": [{"role": r, "name": n, "description": d} for r, n, d in rows]})
        return
    width = max(len(name) for _, name, _ in rows)
    for role_name, name, description in rows:
        print(f"{role_name:<5} {name:<{width}}  {description}")


def list_params(json_out: bool) -> None:
    """``problems --params``: each problem's and protocol's parameters (name, type, default, range,
    description); a run takes those of its problem and its protocol."""
    from debatekit.cli.common import emit_json
    from debatekit.params import declared
    from debatekit.problems import PROBLEMS
    from debatekit.protocols.registry import PROTOCOLS

    owners = [("problem", p.name, declared(p.params)) for p in PROBLEMS.values()]
    owners += [("protocol", s.name, declared(type(s.params))) for s in PROTOCOLS.values()]
    owners = [owner for owner in owners if owner[2]]
    if json_out:
        emit_json({"params": [{"kind": k, "name": n, "params": [_param_json(q) for q in ps]} for k, n, ps in owners]})
        return
    listed = [
        (f"{kind} {name}:", [((q.name, q.kind.__name__, str(q.default), q.admitted), q.description) for q in ps])
        for kind, name, ps in owners
    ]
    widths = [max(len(cells[i]) for _, rows in listed for cells, _ in rows) for i in range(4)]
    for heading, rows in listed:
        print(heading)
        for cells, description in rows:
            print("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "  " + description)
    print("set with -P NAME=VALUE on run, solve and demo; the rest take none")


def _param_json(q: Param) -> dict:
    return {
        "name": q.name,
        "type": q.kind.__name__,
        "default": q.default,
        "low": q.bounds.low,
        "high": q.bounds.high,
        "open_low": q.bounds.open_low,
        "open_high": q.bounds.open_high,
        "description": q.description,
    }
