"""``debatekit plan``: the certified planner for the human-judgement budget (docs/planner.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.logs_cmd import LogDirOption, NoLogOption, check_log_dir, start_log
from debatekit.cli.options import JsonOption
from debatekit.protocols.stochastic.params import Constants, Proof
from debatekit.runs.plan import FixedConstants, Frontier, Strongest, gap, planned

if TYPE_CHECKING:
    from debatekit.protocols.stochastic.planner import Plan


def plan(
    K: Annotated[float, typer.Option("--K", help="Lipschitz constant of the machine at the oracle (> 0).")],
    T: Annotated[int, typer.Option("--T", help="Steps of the machine (>= 1).")],
    completeness: Annotated[
        float | None, typer.Option("--completeness", help="Least P[honest Alice wins] (default 0.6).")
    ] = None,
    soundness: Annotated[
        float | None, typer.Option("--soundness", help="Least P[honest Bob wins] (default 0.6).")
    ] = None,
    prover_budget: Annotated[
        int | None,
        typer.Option("--prover-budget", help="Most queries per step for each honest prover (default: Lean's)."),
    ] = None,
    constants: Annotated[
        FixedConstants | None,
        typer.Option("--constants", help="Report Lean's or the paper's constants instead of planning."),
    ] = None,
    proof: Annotated[
        Proof | None,
        typer.Option(
            "--proof",
            help="direct (default): one-sided tails prove bob_complete/bob_sound's conclusions (docs/planner.md); "
            "lean: two-sided tails prove alice_pr_le's for every party, and Lean's lemmas do the rest.",
        ),
    ] = None,
    show_frontier: Annotated[
        bool,
        typer.Option(
            "--frontier", help="Verifier queries at 1, 3, 10, 30 and 100 times Lean's prover budget, both proofs."
        ),
    ] = False,
    verifier_budget: Annotated[
        int | None,
        typer.Option(
            "--verifier-budget",
            metavar="R",
            help="The strongest completeness and soundness certifiable with at most R verifier queries per debate "
            "(both proofs; with --completeness or --soundness, the best other one).",
        ),
    ] = None,
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
) -> None:
    """Fewest verifier (human) queries for stochastic-oracle debate, certified by upper bounds on binomial tails;
    logged when done (see `debatekit logs`)."""
    import time

    from debatekit.cli.common import emit_json

    config = {"command": "plan", "K": K, "T": T, "completeness": completeness, "soundness": soundness,
              "prover_budget": prover_budget, "constants": constants and constants.value,
              "proof": proof and proof.value, "frontier": show_frontier,
              "verifier_budget": verifier_budget}  # fmt: skip
    if not no_log:
        check_log_dir(log_dir)
    started = time.perf_counter()
    result = planned(K, T, completeness, soundness, prover_budget, constants, proof, show_frontier, verifier_budget)
    if not no_log:  # logged once done: a mistake leaves no folder
        start_log(log_dir, config, None).finish(result.to_json(), time.perf_counter() - started)
    if json_out:
        emit_json(result.to_json())
    elif isinstance(result, Frontier):
        _print_frontier(result)
    elif isinstance(result, Strongest):
        _print_strongest(result)
    else:
        _print_plan(result)


def _print_plan(p: Plan) -> None:
    width = 30
    rows: list[tuple[str, str]] = [("verifier_queries", f"{p.verifier_queries}")]
    if p.prover_budget is None:
        rows += [
            ("alice_queries_per_step", f"{p.alice_queries_per_step}"),
            ("bob_queries_per_step", f"{p.bob_queries_per_step}"),
        ]
    else:
        rows += [
            ("alice_queries_per_step", f"{p.alice_queries_per_step} (cap {p.prover_budget[0]})"),
            ("bob_queries_per_step", f"{p.bob_queries_per_step} (cap {p.prover_budget[1]})"),
        ]
    if p.params is None:
        rows += [
            ("completeness", f"{p.completeness:.6g} (Theorem 6.2)"),
            ("soundness", f"{p.soundness:.6g} (Theorem 6.2: P[V = 1] <= {1 - p.soundness:.6g})"),
            ("parameters", "d = ceil(150 K); the paper's r and R samples"),
        ]
    elif p.alice_failure is None:
        q = p.params
        rows += [
            ("completeness", f"{p.completeness:.6g} = (1-v)(w - K c - q T) (target {q.completeness:g})"),
            ("soundness", f"{p.soundness:.6g} = (1-v)(1 - q T)(w - K b) (target {q.soundness:g})"),
            ("parameters", f"v={q.v:.6g} c={q.c:.6g} s={q.s:.6g} b={q.b:.6g} q={q.q:.6g} w=2/3"),
        ]
    else:
        q = p.params
        rows += [
            ("completeness", f"{p.completeness:.6g} = (1-v)(w - K c - q T) (target {q.completeness:g})"),
            ("soundness", f"{p.soundness:.6g} = (1-v)(1 - q T)(w - K b) (target {q.soundness:g})"),
            ("parameters", f"v={q.v:.6g} c={q.c:.6g} s={q.s:.6g} b={q.b:.6g} q={q.q:.6g} w=2/3"),
            ("alice failure bound", f"{p.alice_failure:.4g} <= q (estimate off by >= c)"),
        ]
        if p.proof is Proof.lean:
            rows += [
                ("bob estimate failure bound", f"{p.bob_estimate_failure:.4g} <= q (off by >= (b-s)/2)"),
                ("vera estimate failure bound", f"{p.vera_estimate_failure:.4g} <= v (off by >= (s-c)/2)"),
            ]
        else:
            rows += [
                (
                    "bob failure bounds",
                    f"{p.bob_complete_failure:.4g} (reject, off <= s), {p.bob_sound_failure:.4g} <= q",
                ),
                (
                    "vera failure bounds",
                    f"{p.vera_complete_failure:.4g} (reject, off <= c), {p.vera_sound_failure:.4g} <= v",
                ),
            ]
        note = _LEAN_DEFAULTS_NOTE if p.constants is Constants.lean or p.proof is None else _PROOF_NOTE[p.proof]
        rows.append(("proof", note))
    print(f"{p.constants} constants for K = {p.k:g}, T = {p.T}")
    for name, value in rows:
        print(f"{name:<{width}}{value}")


_PROOF_NOTE = {
    Proof.direct: "direct: one-sided exact tails prove bob_complete/bob_sound's conclusions (docs/planner.md)",
    Proof.lean: "lean: two-sided exact tails prove alice_pr_le's conclusion per party; Lean's lemmas do the rest",
}
_LEAN_DEFAULTS_NOTE = "Lean's theorems as stated (Hoeffding's samples); the exact tails above are for comparison"


def _print_frontier(f: Frontier) -> None:
    """One table per proof (four columns each, so that an 80-column terminal shows every number)."""
    from rich.table import Table

    from debatekit.cli.common import stdout

    for proof, plans in ((Proof.direct, f.direct), (Proof.lean, f.lean_route)):
        table = Table(title=f"verifier queries against prover budget, {proof} proof (K = {f.lean.k:g}, T = {f.lean.T})")
        for name in ("prover budget", "verifier", "alice/step", "bob/step"):
            table.add_column(name, justify="right")
        for p in plans:
            table.add_row(f"{f.multiplier(p)}x Lean's", *_cells(p))
        for p in (f.lean, f.paper):
            table.add_row(f"{p.constants} constants", *_cells(p))
        table.caption = _PROOF_NOTE[proof]
        stdout.print(table)
    print("failure figures are certified upper bounds (binomial tails, computed exactly up to a 1e-9 relative margin)")


def _cells(p: Plan) -> list[str]:
    return [str(p.verifier_queries), str(p.alice_queries_per_step), str(p.bob_queries_per_step)]


def _print_strongest(best: Strongest) -> None:
    """Both proofs' strongest plans side by side."""
    from rich.table import Table

    from debatekit.cli.common import stdout

    p = best.direct
    table = Table(title=f"the strongest guarantee with at most {best.verifier_budget} verifier queries "
                  f"(K = {p.k:g}, T = {p.T})")  # fmt: skip
    for name in ("", Proof.direct.value, Proof.lean.value):
        table.add_column(name, justify="right")
    plans = (best.direct, best.lean_route)
    rows = {
        "verifier queries": [str(x.verifier_queries) for x in plans],
        "completeness": [f"{x.completeness:.4f}" for x in plans],
        "soundness": [f"{x.soundness:.4f}" for x in plans],
        "gap": [f"{gap(x):+.4f}" for x in plans],
        "alice/step": [str(x.alice_queries_per_step) for x in plans],
        "bob/step": [str(x.bob_queries_per_step) for x in plans],
    }
    for name, cells in rows.items():
        table.add_row(name, *cells)
    table.caption = "completeness: least P[V = 1] if P[M = 1] >= 2/3; soundness: least P[V = 0] if P[M = 1] <= 1/3"
    if gap(best.plan) <= 0:
        table.caption += "; a gap <= 0 certifies nothing a coin flip does not: raise R"
    stdout.print(table)
