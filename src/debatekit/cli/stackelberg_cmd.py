"""``debatekit stackelberg``: Theorem 6.2 on a small stable decomposition (A leads, B follows)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.options import JsonOption
from debatekit.mistakes import UserError

if TYPE_CHECKING:
    from rich.table import Table

DEFAULT_EPSILONS = (0.02, 0.05, 0.1)
FOLLOWERS = ("honest", "omniscient", "shifted", "constant", "inverted")
"""The players table's estimators that are functions of their arguments (exact values need them)."""
DEFAULT_FOLLOWERS = ("honest", "omniscient", "shifted")
MAX_JUDGEMENTS = 4
"""μ holds every judgement vector: at most 2^4 = 16 inputs."""
MAX_DEPTH = 4
"""κ^d pieces of evidence per judgement: 3^4 = 81 at κ = 3."""
MAX_WIDTH = 10
"""As Algorithm 1's (:data:`debatekit.players.estimator.MAX_WIDTH`), for every estimator."""


class SearchChoice(StrEnum):
    auto = "auto"
    exhaustive = "exhaustive"
    iterated = "iterated"


def stackelberg(
    epsilon: Annotated[
        list[float] | None,
        typer.Option("--epsilon", help="0 < epsilon < 1/2; repeatable, one row each (default: 0.02, 0.05 and 0.1)."),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", help="Depth d of the evidence-majority decomposition (>= 1).")] = 2,
    kappa: Annotated[int, typer.Option("--kappa", help="Copies under each majority (odd, >= 1).")] = 3,
    fan_in: Annotated[int, typer.Option("--fan-in", help="Fan-in w of the AND/OR tree (>= 1; 1: one judgement).")] = 1,
    estimators: Annotated[
        list[str] | None,
        typer.Option(
            "--bob",
            help=f"B's candidate estimators, repeatable: {', '.join(FOLLOWERS)} "
            f"(default: {', '.join(DEFAULT_FOLLOWERS)}; honest is Algorithm 1, Lemma A.4's B).",
        ),
    ] = None,
    search: Annotated[
        SearchChoice,
        typer.Option("--search", help="exhaustive, iterated, or auto (exhaustive up to --max-profiles)."),
    ] = SearchChoice.auto,
    max_profiles: Annotated[
        int, typer.Option("--max-profiles", help="auto: the most leader strategies searched exhaustively.")
    ] = 100_000,
    json_out: JsonOption = False,
) -> None:
    """Theorem 6.2: A's best strategy as leader, over every pure plan on every input, against B's
    best response among the named estimators, on Appendix C's evidence-majority decomposition made
    small (every judgement vector, clean evidence, uniform); P[A(x) = L(x)] beside 1 - 4*epsilon
    (see debatekit.analysis.stackelberg)."""
    from debatekit.analysis import stackelberg as analysis
    from debatekit.cli.common import emit_json, stdout
    from debatekit.ledger import Role
    from debatekit.players.prover_estimator import STRATEGIES
    from debatekit.progress import progress
    from debatekit.runs.spec import positive

    epsilons = tuple(epsilon) if epsilon else DEFAULT_EPSILONS
    for eps in epsilons:
        if not 0 < eps < 0.5:  # before any row is computed
            raise UserError(f"--epsilon must satisfy 0 < epsilon < 1/2 (Definition 5.3), got {eps}")
    names = tuple(estimators) if estimators else DEFAULT_FOLLOWERS
    for name in names:
        if name not in FOLLOWERS:
            raise UserError(f"unknown --bob {name!r}; choose from: {', '.join(FOLLOWERS)}")
    positive(max_profiles, "--max-profiles")
    if depth < 1:
        raise UserError(f"--depth must be at least 1, got {depth}")
    if fan_in * kappa > MAX_WIDTH:
        raise UserError(f"width w*kappa = {fan_in * kappa} > {MAX_WIDTH}: exact values enumerate 2^q answer vectors")
    if fan_in < 1:
        raise UserError(f"--fan-in must be at least 1, got {fan_in}")
    if depth > MAX_DEPTH or fan_in**depth > MAX_JUDGEMENTS:
        raise UserError(f"at most depth {MAX_DEPTH} and w^d <= {MAX_JUDGEMENTS} judgements (mu holds 2^(w^d) inputs)")
    bobs = tuple(STRATEGIES[Role.BOB][name] for name in names)
    chosen = None if search is SearchChoice.auto else analysis.Search(search.value)
    checks = []
    with progress(len(epsilons), "Theorem 6.2") as advance:
        for done, eps in enumerate(epsilons, start=1):
            try:
                game = analysis.evidence_majority_game(eps, depth, kappa, fan_in)
            except ValueError as err:
                raise UserError(str(err)) from err
            for b in bobs:
                refusal = b.refuses(game.cases[0].instance) if b.refuses else None
                if refusal:
                    raise UserError(f"--bob {b.name}: {refusal}")
            checks.append(analysis.check_theorem(game, bobs, search=chosen, max_profiles=max_profiles))
            advance(done)
    data: dict[str, Any] = {
        "decomposition": type(game.cases[0].decomposition).__name__,
        "depth": depth,
        "kappa": kappa,
        "fan_in": fan_in,
        "width": fan_in * kappa,
        "bobs": list(names),
        "rows": [c.to_json() for c in checks],
    }
    if json_out:
        emit_json(data)
    else:
        stdout.print(table(data))


def _flag(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def table(data: dict[str, Any]) -> Table:
    """The Theorem 6.2 table: one row per epsilon; the hypotheses and the strategies in the caption."""
    from rich.table import Table

    out = Table(
        title=f"Theorem 6.2 on {data['decomposition']} (d = {data['depth']}, q = {data['width']}, "
        f"kappa = {data['kappa']}, w = {data['fan_in']}): A leads, B follows from {{{', '.join(data['bobs'])}}}"
    )
    for name in ("eps", "P[A=L]", "> 1-4eps", "A payoff", "B payoff", "hyp.", "search"):
        out.add_column(name, justify="right", no_wrap=True)
    notes = []
    for row in data["rows"]:
        hyp = row["hypotheses"]
        out.add_row(
            f"{row['epsilon']:g}",
            f"{row['accuracy']:.4g}",
            f"{_flag(row['holds'])} ({row['bound']:.4g})",
            f"{row['leader_payoff']:.4g}",
            f"{row['follower_payoff']:.4g}",
            _flag(hyp["hold"]),
            f"{row['search']} {row['searched']}",
        )
        delta = "unknown" if hyp["delta"] is None else f"{hyp['delta']:.3g}"
        violator = "none searched" if row["violator_payoff"] is None else f"{row['violator_payoff']:.4g}"
        plays = "; ".join(
            f"{x}: {a} vs {b}" for x, a, b in zip(row["inputs"], row["leader"], row["reply"], strict=True)
        )
        notes.append(
            f"eps = {row['epsilon']:g}: stable {_flag(hyp['stable'])}, delta {delta} (needed <= "
            f"{hyp['delta_needed']:.3g}), (1-eps)r^(d+1) = {row['honest_floor']:.4g}, best violator {violator}. "
            f"{plays}."
        )
    out.caption = "\n".join(
        [
            *notes,
            "hypotheses: (eps, 1/2)-stable on every input (exact), Lemma A.5's A among A's plans, Lemma A.4's B "
            "(Algorithm 1) among B's with delta <= eps r^(d+1)/(2d+1), exhaustive search (alpha = 0). Best "
            "violator: the best A payoff among searched strategies with P[A=L] <= 1-4eps.",
        ]
    )
    return out
