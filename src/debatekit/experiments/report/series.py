"""What each plot draws, exactly (tests compare it with the rows read): rates pooled over runs with
their Wilson 95% intervals (:func:`debatekit.analysis.stats.wilson`) and the theorem's promise, and
the points of each plot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from debatekit.analysis.stats import wilson
from debatekit.experiments.report.rows import BitsPoint, Exact, Frontier, Report, Run


@dataclass(frozen=True)
class Rate:
    """A rate pooled over runs, with its Wilson 95% interval and the theorem's promise where it makes one."""

    successes: int
    trials: int
    low: float
    high: float
    promise: float | None = None

    @property
    def rate(self) -> float:
        return self.successes / self.trials


def _pool(runs: Iterable[Run], rate: Callable[[Run], float | None], promise: float | None = None) -> Rate | None:
    counted = [(round(value * r.trials), r.trials) for r in runs if (value := rate(r)) is not None]
    if not counted:
        return None
    successes, trials = sum(s for s, _ in counted), sum(n for _, n in counted)
    return Rate(successes, trials, *wilson(successes, trials), promise)


def _promise(runs: list[Run], truth: str) -> float | None:
    """The accept rate the theorem promises: at least c on yes instances, at most s on no ones (the
    weakest over pooled runs); None when vacuous, or when the side the truth is with (Alice on yes,
    Bob on no) is not the built-in honest strategy in every pooled run: the theorems promise
    nothing to a dishonest side (a user's own honest strategy gets no tick: the log cannot say)."""
    if truth == "yes":
        if any(r.alice != "honest" for r in runs):
            return None
        values = [r.completeness for r in runs if r.completeness is not None and r.completeness > 0]
        return min(values) if values else None
    if any(r.bob != "honest" for r in runs):
        return None
    values = [r.soundness for r in runs if r.soundness is not None and r.soundness < 1]
    return max(values) if values else None


def rates_series(report: Report) -> dict[tuple[str, str], dict[str, dict[str, Rate]]]:
    """(protocol, adversary) → truth → {"accept", "honest win"}: rates pooled over problems, sizes and seeds."""
    groups: dict[tuple[str, str], dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for r in report.runs:
        groups[(r.label, r.adversary)][r.truth].append(r)
    out: dict[tuple[str, str], dict[str, dict[str, Rate]]] = {}
    for key in sorted(groups):
        out[key] = {}
        for truth, runs in sorted(groups[key].items(), key=lambda item: item[0] != "yes"):
            rates = {"accept": _pool(runs, lambda r: r.accept_rate, _promise(runs, truth)),
                     "honest win": _pool(runs, lambda r: r.honest_win_rate)}  # fmt: skip
            out[key][truth] = {name: rate for name, rate in rates.items() if rate is not None}
    return out


def accept_series(report: Report) -> dict[tuple[str, str, str], dict[str, dict[int, Rate]]]:
    """(protocol, problem, truth) → adversary → T → accept rate (pooled over seeds), for groups with
    several T."""
    groups: dict[tuple[str, str, str], dict[str, dict[int, list[Run]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for r in report.runs:
        if r.accept_rate is not None and r.T is not None:
            groups[(r.label, r.problem, r.truth)][r.adversary][r.T].append(r)
    out = {}
    for key in sorted(groups):
        if len({T for by_T in groups[key].values() for T in by_T}) < 2:
            continue
        out[key] = {
            adversary: {T: rate for T in sorted(by_T) if (rate := _pool(by_T[T], lambda r: r.accept_rate,
                                                                           _promise(by_T[T], key[2])))}
            for adversary, by_T in sorted(groups[key].items())
        }  # fmt: skip
    return out


QUERY_ROLES = (  # role, measured, bound
    ("verifier (max)", lambda r: r.verifier_queries_max, lambda r: r.queries_bound),
    ("alice (mean)", lambda r: r.alice_queries_mean, lambda r: r.alice_queries_bound),
    ("bob (mean)", lambda r: r.bob_queries_mean, lambda r: r.bob_queries_bound),
)


def _queries_series(
    report: Report, axis: Callable[[Run], float | None], group: Callable[[Run], tuple[str, ...]]
) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """group → role → [(x, most queries measured at x, least bound at x)], for groups with several x."""
    groups: dict[tuple[str, ...], dict[float, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for r in report.runs:
        if (x := axis(r)) is not None and r.verifier_queries_max is not None:
            groups[group(r)][x].append(r)
    out = {}
    for key in sorted(groups):
        by_x = groups[key]
        if len(by_x) < 2:
            continue
        out[key] = {}
        for role, measured, bound in QUERY_ROLES:
            points = []
            for x in sorted(by_x):
                values = [v for r in by_x[x] if (v := measured(r)) is not None]
                bounds = [b for r in by_x[x] if (b := bound(r)) is not None]
                if values:
                    points.append((x, max(values), min(bounds) if bounds else None))
            if points:
                out[key][role] = points
    return out


def queries_T_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(T, queries, bound)]."""
    return _queries_series(report, lambda r: r.T, lambda r: (r.label, r.problem))


def queries_K_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(K, queries, bound)], for problems whose K varies (with size)."""
    return _queries_series(report, lambda r: r.K, lambda r: (r.label, r.problem))


def bits_series(report: Report) -> dict[tuple[str, str], list[BitsPoint]]:
    """(protocol, problem) → the most bits read at each n, with the bound, for groups with several n."""
    points = report.bits + [
        BitsPoint(r.protocol, r.problem, r.size, r.verifier_bits_read_max, r.bits_bound)
        for r in report.runs
        if r.size is not None and r.verifier_bits_read_max is not None and r.bits_bound is not None
    ]
    groups: dict[tuple[str, str], dict[int, list[BitsPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        groups[(p.protocol, p.problem)][p.n].append(p)
    return {
        key: [BitsPoint(*key, n, max(p.bits_read_max for p in by_n[n]), min(p.bound for p in by_n[n]))
              for n in sorted(by_n)]
        for key, by_n in sorted(groups.items())
        if len(by_n) > 1
    }  # fmt: skip


def frontier_series(report: Report) -> list[Frontier]:
    return sorted(report.frontiers, key=lambda f: (f.K, f.T))


def payoff_series(report: Report) -> dict[str, list[Run]]:
    """protocol → its runs with payoffs (A's mean payoff, interval, bound; per-debate payoffs when kept)."""
    out: dict[str, list[Run]] = defaultdict(list)
    for r in report.runs:
        if r.payoff_mean is not None and r.payoff_ci is not None:
            out[r.protocol].append(r)
    return dict(sorted(out.items()))


def rewards_series(report: Report) -> list[Run]:
    """The runs with per-round mean rewards."""
    return [r for r in report.runs if r.rewards]


def exact_series(report: Report) -> list[tuple[Exact, Run]]:
    """Each exact value (against the best adversary) beside the Monte Carlo run, of the same protocol,
    problem, size and truth (and seed, when both say), whose adversary did best against the honest side."""
    out = []
    for e in sorted(report.exact, key=lambda e: (e.protocol, e.problem, e.size, e.truth != "yes")):
        runs = [r for r in report.runs if (r.protocol, r.problem, r.size, r.truth) == (e.protocol, e.problem,
                e.size, e.truth) and (e.seed is None or r.seed is None or e.seed == r.seed)]  # fmt: skip
        if runs:
            out.append((e, min(runs, key=lambda r: (r.honest_win_rate, r.adversary))))
    return out
