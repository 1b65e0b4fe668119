"""Write a demo's report folder: ``report.html`` (the report :mod:`debatekit.experiments.report`
makes of any log or sweep, from the demo's rows, plus the reward gap), its PNGs, ``report.md`` (every
table, with the prover-estimator paper's experiments in full) and ``results.json``."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from debatekit.analysis import obfuscation
from debatekit.analysis.recursive import VACUOUS
from debatekit.experiments.demo import DemoResult
from debatekit.experiments.report.draw import BOUND_STYLE, figure, save
from debatekit.experiments.report.html import embed, write
from debatekit.experiments.report.read import from_demo
from debatekit.protocols.prover_estimator import Rules

GAP_FILE = "reward_gap.png"


def write_report(result: DemoResult, folder: Path) -> Path:
    """Write the report into ``folder`` (created if needed) and return it."""
    data = write_results(result, folder)
    _plot_gap(result, folder / GAP_FILE)
    title = "The reward gap against d (prover-estimator against naive recursion)"
    gap = embed(folder / GAP_FILE, title, f"Exact expected payoffs (no debates sampled); seed {result.seed}.")
    write(from_demo(data), folder, [gap])
    (folder / "report.md").write_text(_markdown(result))
    return folder


def write_results(result: DemoResult, folder: Path) -> dict[str, Any]:
    """Write ``results.json`` alone into ``folder`` (created if needed; all an interrupted demo
    writes, quickly: no plots) and return what it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    data = to_json(result)
    (folder / "results.json").write_text(json.dumps(data, indent=2) + "\n")
    return data


def to_json(result: DemoResult) -> dict[str, Any]:
    stopped = {"interrupted": True} if result.interrupted else {}
    return stopped | {
        "all_guarantees_hold": result.holds,
        "seed": result.seed,
        "rows": [asdict(r) for r in result.rows],
        "exact_runs": [asdict(r) for r in result.exact_runs],
        "scaling": [asdict(s) for s in result.scaling],
        "exact": [asdict(s) for s in result.exact],
        "xor_of_judgements": [asdict(x) for x in result.xor],
        "prover_estimator": [asdict(p) for p in result.payoffs],
        "reward_gap": [asdict(g) for g in result.gap],
    }


def _plot_gap(result: DemoResult, path: Path) -> None:
    """Both gaps against d on a log scale, one panel per (q, ε): the regime with no crossing above
    the one with it, the crossings marked."""
    families = sorted({(g.width, g.epsilon) for g in result.gap})
    fig, axes = figure(len(families), 1, 4.2 * len(families))
    for ax, (width, epsilon) in zip(axes[:, 0], families, strict=True):
        points = sorted((g for g in result.gap if (g.width, g.epsilon) == (width, epsilon)), key=lambda g: g.depth)
        d = [g.depth for g in points]
        r = _reward_ratio(epsilon)
        ax.plot(d, [g.pe_gap for g in points], "o-", color="C0", label="prover-estimator (truthful B): r^(d+1)")
        ax.plot(d, [g.naive_gap for g in points], "s-", color="C1", label="naive, bounded honest challenger")
        ax.plot(d, [g.naive_random_gap for g in points], "^--", color="C2", label="naive, random challenger: q^-d")
        ax.plot(d, [g.pe_gap_bound for g in points], label="bound (1-eps) r^(d+1) (Lemma A.5)", **BOUND_STYLE)
        crossings = 0
        for who, color, style in (("bounded", "C1", "-"), ("random", "C2", "--")):
            found = obfuscation.crossing(points, who == "random")
            if found is not None:
                crossings += 1
                ax.axvline(found - 0.5, color=color, linestyle=style, linewidth=1, alpha=0.7,
                           label=f"prover-estimator ahead of naive ({who}) from d = {found}")  # fmt: skip
        relation = ">" if r > 1 / width else "<"
        ax.set_title(f"q = {width}, eps = {epsilon}: r = {r:.3g} {relation} 1/q = {1 / width:.3g}")
        if not crossings:
            ax.text(0.97, 0.97, f"no crossing up to d = {d[-1]}", transform=ax.transAxes, ha="right", va="top")
        ax.set_yscale("log")
        ax.set_xticks(d)
        ax.set_xlabel("d (rounds; n = q^d leaves)")
        ax.set_ylabel("reward gap Delta (exact)")
        ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    save(fig, path)


def _reward_ratio(epsilon: float) -> float:
    """r = ε(1-ρ)/4 at ρ = 1/2, the reward ratio of the gap families."""
    return Rules(epsilon, 0.5).r


def _payoff_lines(result: DemoResult) -> list[str]:
    lines = [
        "",
        "## Prover-estimator debate against obfuscation (Theorem 6.1, Section 7)",
        "",
        "Payoffs are A's; for prover-estimator debate they are also given in units of r^(d+1), the reward scale",
        "(1/n in Theorem 6.1). The bound is the theorem's for this instance (input distribution: its point mass);",
        "'holds' checks the interval at family-wise 95% (Bonferroni over these rows) against it where the theorem "
        "makes a promise, and says why not elsewhere: B not covered, the decomposition not certified",
        f"(eps, rho)-stable (Lemma A.5), or '{VACUOUS}' (Lemma A.4's (2d+2) delta at or above the honest floor).",
        "",
        "| experiment | protocol | problem | size | truth | alice | bob (what it may compute) | payoff [95% CI] "
        "| in r^(d+1) | bound | honest win rate | holds | promise |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in result.payoffs:
        verdict = "no promise" if p.holds is None else ("yes" if p.holds else "NO")
        lines.append(
            f"| {p.experiment} | {p.protocol} | {p.problem} | {p.size} | {p.truth} | {p.alice} "
            f"| {p.bob} ({p.bob_power}) | {_payoff_cells(p)} "
            f"| {p.bound_kind} {p.payoff_bound:.3g} "
            f"| {p.honest_win_rate:.3f} | {verdict} | {p.promise} |"
        )
    return lines + _like_for_like_lines(result) + _challenger_lines(result) + _gap_lines(result)


def _payoff_cells(p: obfuscation.PayoffRow) -> str:
    """A payoff row's two cells: the mean payoff with its 95% interval, and in units of r^(d+1)
    (empty for naive recursion, which has no reward scale)."""
    lo, hi = p.payoff_ci
    units = "" if p.reward_unit is None else f"{p.payoff_mean / p.reward_unit:.3g}"
    return f"{p.payoff_mean:.3g} [{lo:.3g}, {hi:.3g}] | {units}"


def _like_for_like_lines(result: DemoResult) -> list[str]:
    """Section 7 like for like: the obfuscator against B's of equal power in both protocols."""
    lines = [
        "",
        "## Section 7 like for like: the obfuscator against B's of equal power",
        "",
        "The obfuscating prover on the same composite N in both protocols. Bounded: naive recursion's challengers",
        "and prover-estimator's bounded estimators each spend at most 2^10 operations a debate (trial division, or",
        "Pollard's rho), the same way. Unbounded: naive recursion's omniscient challenger; prover-estimator's truthful",
        "estimator and Lemma A.4's (`honest`: Algorithm 1 trained on the truth of her proof on this instance, which",
        "has in effect factored N). 'Wins' is the obfuscator's: the verdict is her false claim.",
        "",
        "| B's power | protocol | bob | size | obfuscator wins | her payoff [95% CI] | in r^(d+1) |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in result.payoffs:
        if p.experiment not in (obfuscation.BOUNDED_B, obfuscation.UNBOUNDED_B):
            continue
        lines.append(
            f"| {p.bob_power} | {p.protocol} | {p.bob} | {p.size} | {1 - p.honest_win_rate:.3f} | {_payoff_cells(p)} |"
        )
    return lines


def _challenger_lines(result: DemoResult) -> list[str]:
    sizes = sorted({c.size for c in result.challengers})
    names = list(dict.fromkeys(c.challenger for c in result.challengers))
    rates = {(c.size, c.challenger): c for c in result.challengers}
    lines = [
        "",
        "## Obfuscation against every bounded challenger (naive recursion)",
        "",
        "The obfuscating prover's win rate in naive recursion on obfuscated-primality (N has 2b bits), one debate",
        "per fresh instance, with Wilson 95% intervals. Every challenger may spend 2^10 operations per debate (one",
        "division with remainder or one multiplication modulo N): `honest` on trial division near the leaves,",
        "`pollard-rho` on Pollard's rho (Brent's variant) at the root. Obfuscation wins where the interval's lower",
        f"end is at least {obfuscation.OBFUSCATION_WINS} against every challenger, and loses where some challenger",
        f"holds her below it (the upper end under {obfuscation.OBFUSCATION_WINS}); too few debates may resolve",
        "neither. The problem's default size was chosen from 1000 debates per cell (README): the least b at which",
        "obfuscation wins.",
        "",
        "| b | d | " + " | ".join(names) + " | obfuscation wins |",
        "|---|---|" + "---|" * len(names) + "---|",
    ]
    for b in sizes:
        row = [rates[(b, name)] for name in names]
        cells = [f"{c.win_rate:.3f} [{c.win_ci[0]:.3f}, {c.win_ci[1]:.3f}]" for c in row]
        lines.append(f"| {b} | {row[0].depth} | " + " | ".join(cells) + f" | {_verdict(row)} |")
    return lines


def _verdict(row: list[obfuscation.ChallengerRate]) -> str:
    if all(c.obfuscation_wins for c in row):
        return "yes"
    if any(c.win_ci[1] < obfuscation.OBFUSCATION_WINS for c in row):
        return "no"
    return "not resolved"


def _gap_lines(result: DemoResult) -> list[str]:
    lines = [
        "",
        "## The reward gap against d",
        "",
        "Delta = E[honest A's payoff on a prime] - E[obfuscating A's payoff on N = p·p'], exactly. Prover-estimator",
        "debate, against the truthful estimator: Delta = r^(d+1) (the honest A's initial reward; the obfuscator earns",
        "0 in expectation). Naive recursion, where the honest A always wins: Delta is the probability that the",
        "challenger walks to the false leaf, for the bounded honest challenger and for the uniformly random one",
        "(q^-d).",
        "",
        "![reward gap against d](reward_gap.png)",
        "",
        "Prover-estimator's gap falls by r per level; naive recursion's by the challenger's per-level catch",
        "probability: 1/q for the random challenger, and for the bounded one 1 in the rounds it decides by trial",
        "division, else 1/(subclaims it cannot decide). So prover-estimator's gap can overtake naive recursion's only",
        "when r > 1/q.",
        "",
    ]
    for width, epsilon in sorted({(g.width, g.epsilon) for g in result.gap}):
        points = sorted((g for g in result.gap if g.width == width and g.epsilon == epsilon), key=lambda g: g.depth)
        r = _reward_ratio(epsilon)
        bounded, random = obfuscation.crossing(points), obfuscation.crossing(points, random=True)
        found = [f"from d = {d} against the {who} challenger" for who, d in (("bounded", bounded), ("random", random))
                 if d is not None]  # fmt: skip
        verdict = "it does " + " and ".join(found) if found else f"it does not, up to d = {points[-1].depth}"
        relation = ">" if r > 1 / width else "<"
        lines.append(f"At q = {width}, eps = {epsilon} (r = {r:.4g} {relation} 1/q = {1 / width:.4g}) {verdict}.")
    lines += [
        "",
        "| q | eps | d | n = q^d | root subclaims with candidates | PE honest | PE obfuscator | PE Delta "
        "| (1-eps) r^(d+1) | naive Delta (bounded) | naive Delta (random) | PE ahead (bounded / random) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *[
            f"| {g.width} | {g.epsilon} | {g.depth} | {g.leaves} | {g.top_subclaims} | {g.pe_honest:.4g} "
            f"| {g.pe_obfuscator:.4g} | {g.pe_gap:.4g} | {g.pe_gap_bound:.4g} | {g.naive_gap:.4g} "
            f"| {g.naive_random_gap:.4g} | {_yes(g.pe_gap > g.naive_gap)} / {_yes(g.pe_gap > g.naive_random_gap)} |"
            for g in result.gap
        ],
    ]
    return lines


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _markdown(result: DemoResult) -> str:
    lines = [
        "# debatekit demo report",
        "",
        f"All guarantees hold: **{'yes' if result.holds else 'NO'}**.",
        "",
        "## Honest side against every built-in adversary",
        "",
        "| protocol | problem | size | T | truth | adversary | honest win rate | accept rate [95% CI] "
        "| V queries (max / bound) | bits read (max / bound) | holds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result.rows:
        lines.append(
            f"| {r.protocol}{'' if r.constants is None else f' ({r.constants})'} | {r.problem} | {r.size} | {r.T} "
            f"| {r.truth} | {r.adversary} | "
            f"{r.honest_win_rate:.3f} | {r.accept_rate:.3f} [{r.accept_ci[0]:.3f}, {r.accept_ci[1]:.3f}] | "
            f"{r.verifier_queries_max} / {r.queries_bound} | {r.verifier_bits_read_max} / {r.bits_bound} | "
            f"{'yes' if r.holds else 'NO'} |"
        )
    lines += [
        "",
        "## Bits read as T grows",
        "",
        "![bits read against T](bits_read.png)",
        "",
        "| protocol | problem | size | T | bits read (max) | bound |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s.protocol} | {s.problem} | {s.size} | {s.T} | {s.verifier_bits_read_max} | {s.bits_bound} |"
        for s in result.scaling
    ]
    lines += [
        "",
        "## What goes wrong without Lipschitzness: xor-of-judgements",
        "",
        "The XOR of n human judgements (each yes with probability 0.98) is the paper's example of a computation",
        "that is not robust: K grows linearly with n, every budget grows like K², and P[M = 1] approaches 1/2,",
        "so past n = 26 there is no 2/3 promise left to debate.",
        "",
        "| n | T | K | abs(P[M=1] - 1/2) | verifier queries (Lean) | verifier queries (paper) |",
        "|---|---|---|---|---|---|",
        *[
            f"| {x.n} | {x.T} | {x.K:.2f} | {x.distance_from_half:.3f} | {x.lean_verifier_queries} | "
            f"{x.paper_verifier_queries} |"
            for x in result.xor
        ],
        "",
        "## Exact values against the best adversary (exhaustive search)",
        "",
        "| protocol | problem | size | truth | honest | value | guarantee | positions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s.protocol} | {s.problem} | {s.size} | {s.truth} | {s.honest} | {s.exact} | {s.guarantee:g} | "
        f"{s.positions} |"
        for s in result.exact
    ]
    lines += _payoff_lines(result)
    return "\n".join(lines) + "\n"
