"""``debatekit dqc``: debate query complexity of a tiny function (Corollary 4, Lemma 3, Theorem 6)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Annotated

import typer

from debatekit.cli.common import UserError, emit_json


def dqc(
    function: Annotated[str, typer.Option("--function", help="parity, majority, and, or, first, selector, equality.")],
    n: Annotated[int, typer.Option("--n", help="Input bits (1 to 4).")],
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Exact DQC(f) by search over verifiers, beside Corollary 4's log2 n bound and what the
    circuit cross-examination verifier (Theorem 6) reads on parity and majority circuits."""
    from debatekit.analysis import dqc as analysis
    from debatekit.analysis.montecarlo import make_instance
    from debatekit.catalog import PROTOCOLS
    from debatekit.problems import PROBLEMS, InstanceError

    try:
        result = analysis.exact_dqc(function, n)
    except ValueError as err:
        raise UserError(str(err)) from err
    data = asdict(result) | {"log2_n": math.log2(n)}
    if function in ("parity", "majority"):
        try:
            instance = make_instance(PROBLEMS[function], n, False, 0)
        except InstanceError as err:
            raise UserError(str(err)) from err
        spec = PROTOCOLS["circuit-cross-exam"]
        explored = analysis.readable_inputs(spec, instance)
        data["circuit_cross_exam"] = {
            "readable_inputs": sorted(explored.readable),
            "max_bits_read": explored.max_bits_read,
            "bound": spec.guarantee(instance).bits_read,
        }
    if json_out:
        emit_json(data)
        return
    exact = f"DQC = {result.dqc}" if result.dqc is not None else f"{result.lower} <= DQC <= {result.upper}"
    line = (
        f"{function} on {n} bits: {exact} (Corollary 4: >= log2 n = {math.log2(n):.2f}; depends on "
        f"{result.relevant} bits; decision tree depth {result.decision_tree_depth})"
    )
    if "circuit_cross_exam" in data:
        c = data["circuit_cross_exam"]
        line += f"; circuit cross-examination reads <= {c['max_bits_read']} bits (bound {c['bound']})"
    print(line)
