"""``debatekit dqc``: debate query complexity of tiny functions (Corollary 4, Lemma 3, Theorems 6
and 13), exactly."""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from typing import Annotated, Any

import typer

from debatekit.mistakes import UserError


def dqc(
    n: Annotated[int, typer.Option("--n", help="Input bits (1 to 4).")],
    function: Annotated[
        str | None,
        typer.Option("--function", help="parity, majority, and, or, first, selector, equality (default: every one)."),
    ] = None,
    budget: Annotated[
        int, typer.Option("--budget", help="Most candidate verifiers the exact search may compare.", min=1)
    ] = 20_000_000,
    explore: Annotated[
        bool,
        typer.Option("--explore", help="Check Theorem 6 on parity and majority circuits by exploring every debate."),
    ] = False,
    explore_budget: Annotated[
        int, typer.Option("--explore-budget", help="Most game-tree positions that exploration may visit.", min=1)
    ] = 3_000_000,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Exact DQC(f) by search over verifiers, beside the decision-tree floor ceil(log2(m+1)) (which
    sharpens Corollary 4's log2 m), Theorem 13's floor for
    randomised verifiers and Theorem 6's ceiling from the parity and majority circuits; with
    --explore, what circuit cross-examination reads in every debate (majority on 4 bits: about
    2.1 million positions, minutes)."""
    from debatekit.analysis import dqc as analysis
    from debatekit.cli.common import emit_json

    names = [function] if function is not None else list(analysis.FUNCTIONS)
    start = time.perf_counter()
    try:
        rows = [_one(analysis, name, n, budget, explore, explore_budget) for name in names]
    except ValueError as err:
        raise UserError(str(err)) from err
    seconds = time.perf_counter() - start
    if json_out:
        emit_json(rows[0] if function is not None else {"n": n, "seconds": seconds, "functions": rows})
        return
    for row in rows:
        print(_line(row))
    if function is None:
        positions = sum(row["positions"] for row in rows)
        print(f"{len(rows)} functions on {n} bits: {positions} positions in {seconds:.2f} s")


def _one(analysis: Any, name: str, n: int, budget: int, explore: bool, explore_budget: int) -> dict:
    from debatekit.analysis.montecarlo import make_instance
    from debatekit.problems import PROBLEMS, InstanceError
    from debatekit.protocols.registry import PROTOCOLS

    try:
        result = analysis.exact_dqc(name, n, budget)
    except analysis.BudgetExceeded as err:
        raise UserError(f"{name}: {err} (--budget)") from err
    data = asdict(result) | {"log2_n": math.log2(n)}
    if result.witness is not None:
        data["witness"] |= {"table": hex(result.witness.table), "pattern": _pattern(result.witness.pattern)}
    if name in ("parity", "majority"):
        try:
            instance = make_instance(PROBLEMS[name], n, False, 0)
        except InstanceError as err:
            raise UserError(str(err)) from err
        spec = PROTOCOLS["circuit-cross-exam"]
        data["circuit_cross_exam"] = {"bound": spec.guarantee(instance).bits_read}
        if explore:
            try:
                explored = analysis.readable_inputs(spec, instance, explore_budget)
            except analysis.BudgetExceeded as err:
                raise UserError(f"{name}: {err} (--explore-budget)") from err
            data["circuit_cross_exam"] |= {
                "readable_inputs": sorted(explored.readable),
                "max_bits_read": explored.max_bits_read,
                "positions": explored.debates,
            }
    return data


def _pattern(pattern: tuple[bool, ...]) -> str:
    """t_1 … t_r's owners: 0 for Prover 0 (∀), 1 for Prover 1 (∃)."""
    return "".join("0" if forall else "1" for forall in pattern)


def _line(data: dict) -> str:
    m = data["relevant"]
    line = (
        f"{data['function']} on {data['n']} bits: DQC = {data['dqc']} (depends on {m} bits; decision-tree floor "
        f">= ceil(log2({m}+1)) = {data['lower']}, sharpening Corollary 4's log2 {m}; Theorem 13, randomised: "
        f">= log2 {m} - 3 = "
        f"{data['randomised_lower']:.2f}{', vacuous' if data['randomised_lower'] <= 0 else ''}; "
        f"decision tree depth {data['decision_tree_depth']}; "
        f"{data['positions']} positions in {data['seconds']:.2f} s"
    )
    if data["witness"] is not None:
        w = data["witness"]
        line += f"; a verifier: root {w['root']}, transcript bits by prover {w['pattern']}"
    line += ")"
    if "circuit_cross_exam" in data:
        c = data["circuit_cross_exam"]
        line += f"; circuit cross-examination (Theorem 6): DQC <= {c['bound']}"
        if "max_bits_read" in c:
            line += f", reads at most {c['max_bits_read']} bits in {c['positions']} explored positions"
    return line
